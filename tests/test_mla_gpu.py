"""GPU-only cases: long contexts, the seed's configurations, ragged and prefix batches, a KV pool
past 2^31 elements, and CUDA-graph capture replayed with new lengths and page tables."""

import pytest
import torch

import splitkv
from splitkv.testing import capture_cuda_graph, check_against_reference, random_mla_case

pytestmark = pytest.mark.gpu

RAGGED = [1, 63, 64, 65, 4096, 4097, 65536, 327600]
PREFIX_BOUNDARY = [308736, 308737, 312831, 312832, 312833, 320000, 327599, 327600]
SHARED_PREFIX = 308736  # 4824 pages of 64


def check(case, **kwargs):
    out, lse = splitkv.mla_decode(*case.args, validate=True, **kwargs)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    return check_against_reference(out, lse, ref_out, ref_lse)


@pytest.mark.parametrize(
    "context,batch,heads",
    [(327600, 8, 12), (16384, 64, 64), (16384, 64, 128), (16384, 128, 64), (16384, 128, 128)],
)
def test_seed_configurations(context, batch, heads):
    case = random_mla_case([context] * batch, heads, dtype=torch.bfloat16, device="cuda")
    check(case)


@pytest.mark.parametrize("qlen", [1, 2, 4])
def test_ragged_batch(qlen):
    lengths = [max(n, qlen) for n in RAGGED]  # the qlen query tokens are in the cache
    case = random_mla_case(lengths, 12, qlen=qlen, dtype=torch.bfloat16, device="cuda")
    check(case)


@pytest.mark.parametrize("qlen", [1, 2, 4])
@pytest.mark.parametrize("num_programs", [None, 7, 1000])
def test_ragged_batch_program_loop(qlen, num_programs):
    # One program per schedule program, walking its pieces (one wave by default; 1,000
    # programs: more than the batch's blocks at qlen 1, so empty programs mark their slots).
    lengths = [max(n, qlen) for n in RAGGED]
    case = random_mla_case(lengths, 12, qlen=qlen, dtype=torch.bfloat16, device="cuda")
    columns = case.page_table.shape[1]
    plan = splitkv.plan_decode(len(lengths), columns * 64, 12, qlen=qlen, page_size=64,
                               dtype=torch.bfloat16, device="cuda", seq_lens=lengths,
                               schedule="balanced", num_programs=num_programs,
                               program_loop=True)  # fmt: skip
    check(case, plan=plan)


@pytest.mark.parametrize("merge_num_warps", [1, 2, 8])
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_merge_warps(schedule, merge_num_warps):
    # The merge's tiles laid over fewer or more warps: the long request's rows fold 200+
    # partials (balanced) or the plan's splits (uniform) in [BLOCK_S, BLOCK_D] tiles.
    case = random_mla_case(RAGGED, 12, dtype=torch.bfloat16, device="cuda")
    columns = case.page_table.shape[1]
    plan = splitkv.plan_decode(len(RAGGED), columns * 64, 12, page_size=64, dtype=torch.bfloat16,
                               device="cuda", seq_lens=RAGGED, schedule=schedule,
                               merge_num_warps=merge_num_warps)  # fmt: skip
    check(case, plan=plan)


def test_prefix_boundary_batch_with_shared_pages():
    case = random_mla_case(
        PREFIX_BOUNDARY, 12, dtype=torch.bfloat16, device="cuda", shared_prefix=SHARED_PREFIX
    )
    assert torch.equal(case.page_table[0, :4824], case.page_table[7, :4824])
    check(case)


def test_grid_orders_bit_identical_at_long_context():
    case = random_mla_case(
        PREFIX_BOUNDARY, 16, dtype=torch.bfloat16, device="cuda", shared_prefix=SHARED_PREFIX
    )
    outs = []
    for order in ("split_major", "batch_major"):
        plan = splitkv.plan_decode(8, 327600, 16, device="cuda", grid_order=order)
        outs.append(splitkv.mla_decode(*case.args, plan=plan))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("page_size", [1, 64, 256])
def test_pool_past_2_31_elements(page_size):
    # Pages at the far end of a pool of more than 2^31 elements: 32-bit offsets would wrap.
    first_page = (2**31 // (576 * page_size)) + 64
    case = random_mla_case(
        [4000, 777, 65],
        16,
        qlen=2,
        page_size=page_size,
        dtype=torch.bfloat16,
        device="cuda",
        first_page=first_page,
    )
    assert case.kv_cache.numel() > 2**31
    check(case)


@pytest.mark.parametrize(
    "qlen,knobs",
    [
        (2, {}),
        (1, {"kv_tma": True}),  # tensor descriptors captured as kernel arguments
        (1, {"kv_tma": True, "schedule": "balanced", "latent_chains": 2}),  # rebalanced
        (2, {"schedule": "balanced", "program_loop": True}),
        # The merge sized by partials, by default here: 6 requests past (40 - 1) // 16 long
        # slots, whichever request is long at each replay.
        (2, {"schedule": "balanced", "num_programs": 40}),
        (1, {"merge_streams": True}),  # the merge folds each split as its flag goes up
        (2, {"merge_streams": True}),
        (1, {"merge_streams": True, "warp_specialized": False}),  # the Triton stage 1
    ],
)
def test_cuda_graph_capture_once_replay_many(qlen, knobs):
    batch, heads, page_size, columns = 6, 16, 64, 80
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen, device="cuda",
                               **knobs)  # fmt: skip
    gen = torch.Generator().manual_seed(7)
    cases = [
        random_mla_case(
            torch.randint(2, columns * page_size, (batch,), generator=gen).tolist(),
            heads,
            qlen=qlen,
            dtype=torch.bfloat16,
            device="cuda",
            table_columns=columns,
            spare_pages=40,
        )
        for _ in range(4)
    ]
    pool_pages = max(c.kv_cache.shape[0] for c in cases)
    kv = torch.full((pool_pages, page_size, 576), float("nan"), dtype=torch.bfloat16, device="cuda")
    q, table, lens = (t.clone() for t in (cases[0].q, cases[0].page_table, cases[0].seq_lens))
    out = torch.empty(batch, qlen, heads, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(batch, qlen, heads, device="cuda")

    def step():
        splitkv.mla_decode(q, kv, table, lens, plan=plan, out=out, lse=lse)

    graph = capture_cuda_graph(step)
    for case in cases:
        kv[: case.kv_cache.shape[0]].copy_(case.kv_cache)
        for static, new in ((q, case.q), (table, case.page_table), (lens, case.seq_lens)):
            static.copy_(new)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref_out, ref_lse = splitkv.reference.mla_decode(q, kv, table, lens)
        check_against_reference(out, lse, ref_out, ref_lse)
        # merge_streams: the merge cleared every flag stage 1 raised.
        assert plan.workspace.split_flags is None or not plan.workspace.split_flags.any()


@pytest.mark.parametrize(
    "knobs",
    [
        {},
        {"page_prefetch": True, "block_n": 32, "num_stages": 3},
        {"page_prefetch": True, "block_n": 64, "num_stages": 1},
        {"schedule": "balanced", "latent_chains": 2, "block_n": 64, "num_stages": 2},
    ],
)
def test_tma_key_blocks_at_long_context(knobs):
    # Bulk tensor copies on the hardware (the CPU suite runs the interpreter's emulation).
    lengths = [327600, 65537, 4097, 63]
    case = random_mla_case(lengths, 16, dtype=torch.bfloat16, device="cuda")
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * 64, 16, device="cuda",
                               kv_tma=True, **knobs)  # fmt: skip
    check(case, plan=plan)

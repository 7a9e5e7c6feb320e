"""GPU-only GQA cases: long contexts at the issue's model shapes, a pool past 2^31 elements,
and CUDA-graph capture replayed with new lengths and page tables."""

import pytest
import torch

import splitkv
from splitkv.gqa_plan_tile import keeps_uniform_tile
from splitkv.testing import capture_cuda_graph, check_against_reference, random_gqa_case

pytestmark = pytest.mark.gpu

MODELS = {  # q heads, kv heads, head dim
    "llama3-70b-tp8": (8, 1, 128),
    "llama3-8b": (32, 8, 128),
    "qwen-64-8": (64, 8, 128),
    "mha-32": (32, 32, 128),
    "gpt-oss": (64, 8, 64),
}


def check(case, **kwargs):
    out, lse = splitkv.gqa_decode(*case.args, validate=True, **kwargs)
    features = {k: v for k, v in kwargs.items() if k != "plan"}
    ref_out, ref_lse = splitkv.reference.gqa_decode(*case.args, **features)
    return check_against_reference(out, lse, ref_out, ref_lse)


@pytest.mark.parametrize("model", list(MODELS))
def test_models_at_long_context(model):
    q_heads, kv_heads, head_dim = MODELS[model]
    lengths = [131072, 4096, 1, 70000]
    case = random_gqa_case(
        lengths, q_heads, kv_heads, head_dim, page_size=16, dtype=torch.bfloat16, device="cuda"
    )
    sinks = torch.randn(q_heads, device="cuda") if model == "gpt-oss" else None
    check(case, sinks=sinks)


def test_ragged_mtp_with_window_and_cap():
    lengths = [1, 63, 64, 65, 4096, 4097, 65536]
    lengths = [max(n, 4) for n in lengths]
    case = random_gqa_case(
        lengths, 16, 2, 256, qlen=4, page_size=16, dtype=torch.bfloat16, device="cuda"
    )
    check(case, window_left=4096, logit_cap=30.0)


@pytest.mark.parametrize("page_size", [1, 16, 256])
def test_pool_past_2_31_elements(page_size):
    first_page = 2**31 // (page_size * 8 * 128) + 8
    case = random_gqa_case(
        [3000, 17],
        32,
        8,
        128,
        page_size=page_size,
        dtype=torch.bfloat16,
        device="cuda",
        first_page=first_page,
    )
    assert case.k_cache.numel() > 2**31
    check(case)


@pytest.mark.parametrize("planned", [True, False])
def test_cuda_graph_capture_once_replay_many(planned):
    # planned=False: the captured call plans for itself; its shape's plan is remembered from
    # the calls before the capture, and its workspace and outputs come from the graph's pool.
    batch, q_heads, kv_heads, dim, columns = 5, 32, 8, 128, 64
    plan = splitkv.plan_decode(
        batch,
        columns * 16,
        q_heads,
        qlen=2,
        page_size=16,
        kind="gqa",
        num_kv_heads=kv_heads,
        head_dim=dim,
        device="cuda",
    )
    gen = torch.Generator().manual_seed(11)
    cases = [
        random_gqa_case(
            torch.randint(2, columns * 16, (batch,), generator=gen).tolist(),
            q_heads,
            kv_heads,
            dim,
            qlen=2,
            dtype=torch.bfloat16,
            device="cuda",
            table_columns=columns,
            spare_pages=30,
        )
        for _ in range(4)
    ]
    pool = max(c.k_cache.shape[0] for c in cases)
    k = torch.full((pool, 16, kv_heads, dim), float("nan"), dtype=torch.bfloat16, device="cuda")
    v = torch.full_like(k, float("nan"))
    q, table, lens = (t.clone() for t in (cases[0].q, cases[0].page_table, cases[0].seq_lens))
    out = torch.empty(batch, 2, q_heads, dim, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(batch, 2, q_heads, device="cuda")

    results = []

    def step():
        if planned:
            splitkv.gqa_decode(q, k, v, table, lens, plan=plan, out=out, lse=lse)
        else:
            results.append(splitkv.gqa_decode(q, k, v, table, lens))

    graph = capture_cuda_graph(step)
    if not planned:
        out, lse = results[-1]  # the captured call's
    for case in cases:
        k[: case.k_cache.shape[0]].copy_(case.k_cache)
        v[: case.v_cache.shape[0]].copy_(case.v_cache)
        for static, new in ((q, case.q), (table, case.page_table), (lens, case.seq_lens)):
            static.copy_(new)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_against_reference(out, lse, *splitkv.reference.gqa_decode(q, k, v, table, lens))


@pytest.mark.parametrize("page_size", [1, 16, 256])
@pytest.mark.parametrize(
    "q_heads,kv_heads,dim,qlen,dtype",
    [
        (8, 1, 128, 1, torch.bfloat16),  # llama3-70b-tp8: 64-key blocks, 2 programs an SM
        (64, 8, 64, 1, torch.bfloat16),  # gpt-oss: 128-key blocks
        (32, 8, 256, 1, torch.float16),  # 32-key blocks
        (64, 8, 64, 4, torch.bfloat16),  # 32 rows: 64-key blocks
        (8, 1, 128, 8, torch.bfloat16),  # 64 rows
    ],
)
def test_balanced_default_tile_over_any_page_size(page_size, q_heads, kv_heads, dim, qlen,
                                                  dtype):  # fmt: skip
    # The balanced GQA default (3 stages of 32 KB blocks, page ids a block ahead, docs/perf.md
    # session 28), a ragged batch whose pieces start and end inside pages.
    lengths = [8, 63, 64, 65, 700, 4097, 20000, 9]
    case = random_gqa_case(lengths, q_heads, kv_heads, dim, qlen=qlen, page_size=page_size,
                           dtype=dtype, device="cuda", sinks=True)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=dim, page_size=page_size,
                               dtype=dtype, device="cuda", seq_lens=lengths,
                               window_left=5000)  # fmt: skip
    assert (plan.schedule, plan.split_num_stages, plan.page_prefetch) == ("balanced", 3, True)
    plan.workspace.partial_o.fill_(float("nan"))
    check(case, plan=plan, sinks=case.sinks, window_left=5000, logit_cap=30.0)


LONG_SPLIT_CASES = [
    # (lengths, q heads, kv heads, head dim, qlen, page size, block_n)
    *[([131072], 8, 1, 128, qlen, page, 64) for page in (1, 16, 256) for qlen in (1, 2)],
    ([131072], 8, 1, 128, 4, 16, 64),  # 32 rows
    ([65536] * 2, 8, 1, 128, 8, 256, 64),  # 64 rows, half the planner's splits
    ([65536] * 2, 64, 8, 64, 4, 16, 128),  # gpt-oss, 32 rows, half the splits
    ([16384] * 8, 32, 8, 128, 8, 1, 64),  # llama3-8b, 32 rows at 2 an SM
]


@pytest.mark.parametrize("lengths,q_heads,kv_heads,dim,qlen,page_size,block_n", LONG_SPLIT_CASES)
def test_uniform_long_splits_take_the_long_split_tile(lengths, q_heads, kv_heads, dim, qlen,
                                                      page_size, block_n):  # fmt: skip
    # Uniform splits that stream 8+ key blocks each and launch one wave of the long-split
    # tile (3 stages, page ids a block ahead; docs/perf.md sessions 29 and 30), on half
    # the planner's splits where its launch passed that wave; then replayed from a
    # CUDA graph with the requests shortened to lengths that end mid-page. Planned without
    # lengths, as a graph's plan is: uniform asked for (the default is balanced from two
    # requests since v0.2.65).
    case = random_gqa_case(lengths, q_heads, kv_heads, dim, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda", sinks=True)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=dim, page_size=page_size,
                               dtype=torch.bfloat16, device="cuda",
                               schedule="uniform")  # fmt: skip
    tile = (block_n, 3, True)
    if keeps_uniform_tile(plan.block_h, dim, len(lengths), max(lengths), plan.num_splits,
                          splitkv.DeviceSpec.from_torch()):  # fmt: skip
        tile = (128, 2, False)  # an H100's rule (docs/perf.md session 57)
    assert (plan.schedule, plan.block_n, plan.split_num_stages, plan.page_prefetch) == (
        "uniform", *tile)  # fmt: skip
    plan.workspace.partial_o.fill_(float("nan"))
    check(case, plan=plan, sinks=case.sinks, logit_cap=30.0)
    check_graph_replay(case, plan, [(n * 3) // 4 + 3 - i for i, n in enumerate(lengths)])


@pytest.mark.parametrize("q_heads,kv_heads,qlen", [(64, 8, 4), (32, 8, 8), (8, 1, 4)])
def test_the_h100s_wide_uniform_tile_at_the_long_split_count(q_heads, kv_heads, qlen):
    # The H100 preset's rule on whatever GPU runs it: 32 rows at head dim 128, two requests or
    # more on long splits keep the uniform tile (128-key blocks, 2 stages, no page ids ahead)
    # at the long-split tile's count (`gqa_plan_tile.keeps_uniform_tile`); planned with the
    # lengths (8 splits of 2,048 keys, the rule's least), then replayed with new ones.
    lengths = [16384, 16384, 16384] if kv_heads > 1 else [16384] * 20
    case = random_gqa_case(lengths, q_heads, kv_heads, 128, qlen=qlen, page_size=16,
                           dtype=torch.bfloat16, device="cuda", sinks=True)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=128, page_size=16,
                               dtype=torch.bfloat16, device="cuda", seq_lens=lengths,
                               device_spec=splitkv.DeviceSpec.preset("h100"))  # fmt: skip
    assert (plan.schedule, plan.block_h, plan.block_n, plan.split_num_stages) == (
        "uniform", 32, 128, 2)  # fmt: skip
    assert plan.num_splits >= 2 and not plan.page_prefetch
    plan.workspace.partial_o.fill_(float("nan"))
    check(case, plan=plan, sinks=case.sinks, logit_cap=30.0)
    check_graph_replay(case, plan, [n - 1000 * i - 3 for i, n in enumerate(lengths)])


def check_graph_replay(case, plan, new_lengths: list[int]) -> None:
    """`case` decoded on `plan` (with its sinks) under a CUDA graph captured once, replayed
    with the requests at `new_lengths`, out and lse checked against the reference."""
    q, k, v, table, lens = (t.clone() for t in case.args)
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], device=q.device)

    def step():
        splitkv.gqa_decode(q, k, v, table, lens, plan=plan, sinks=case.sinks, out=out, lse=lse)

    graph = capture_cuda_graph(step)
    lens.copy_(torch.tensor(new_lengths, dtype=lens.dtype, device=lens.device))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ref = splitkv.reference.gqa_decode(q, k, v, table, lens, sinks=case.sinks)
    check_against_reference(out, lse, *ref)


ONE_SPLIT_CASES = [
    # (q heads, kv heads, head dim, qlen, lengths, block_n): batches whose default is one split
    # (`gqa_one_split_pays`) on the long-split tile, ragged, with empty and one-key requests.
    (64, 8, 64, 1, [0, 1, 15, 16, 17, 300, 2048, 1000, 700, 5, 128, 129, 1500, 2047, 64, 900],
     128),  # gpt-oss: 16 rows, 128 programs
    (32, 8, 128, 1, [0, 1, 768, 767, 63, 65, 300, 500, 16, 17, 700, 2, 3, 400, 600, 768, 1, 0,
                     250, 129, 128, 127, 766, 20], 64),  # llama3-8b: 16 rows at head dim 128
    (8, 1, 128, 2, [(i * 37) % 701 for i in range(99)] + [700], 64),  # one kv head, 100 programs
    (64, 8, 64, 8, [0, 8, 300, 299, 257, 256, 255, 129, 128, 127, 64, 65, 9, 10, 200, 8, 11,
                    290], 64),  # 64 rows, 300 keys at most: half blocks
    (64, 8, 64, 1, [0, 1, 190, 64, 65, 128, 129, 2, 100, 150, 63, 189, 17, 130, 5, 188],
     64),  # 16 rows, 2 blocks at most: half blocks (v0.2.53)
    (64, 8, 128, 8, [8, 140, 139, 33, 32, 31, 64, 65, 9, 96, 97, 128, 129, 10, 120, 100],
     32),  # 64 rows at head dim 128: 32-key half blocks
    (32, 8, 128, 8, [0, 8, 384, 383, 200, 129, 64, 300, 17, 9], 64),  # thin: 80 programs
]  # fmt: skip


@pytest.mark.parametrize("q_heads,kv_heads,dim,qlen,lengths,block_n", ONE_SPLIT_CASES)
def test_default_one_split_over_short_requests(q_heads, kv_heads, dim, qlen, lengths, block_n):
    # Short requests filling the SMs within a wave take one uniform split by default, each
    # request's program writing its rows (16 rows and one kv head since v0.2.51-v0.2.52;
    # docs/perf.md session 44); then replayed from a CUDA graph with new lengths (1-4 keys
    # shorter: a request's pages past its own hold NaN here).
    case = random_gqa_case(lengths, q_heads, kv_heads, dim, qlen=qlen, page_size=16,
                           dtype=torch.bfloat16, device="cuda", sinks=True)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=dim, page_size=16,
                               dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
    assert (plan.schedule, plan.num_splits, plan.block_n, plan.split_num_stages) == (
        "uniform", 1, block_n, 3)  # fmt: skip
    assert plan.page_prefetch and plan.whole_pieces
    check(case, plan=plan, sinks=case.sinks, logit_cap=30.0)
    shorter = [n - 1 - i % 4 if n - 1 - i % 4 >= qlen else n for i, n in enumerate(lengths)]
    check_graph_replay(case, plan, shorter)


@pytest.mark.parametrize(
    "qlen,requests,keys,splits", [(4, 48, 2048, 1), (4, 24, 16384, 2), (8, 40, 2048, 1),
                                  (8, 20, 16384, 2)])  # fmt: skip
def test_uniform_splits_halved_past_a_wave_of_the_taller_tiles(qlen, requests, keys, splits):
    # gpt-oss at qlen 4 (32 rows, 5 an SM) and 8 (64 rows, 4 an SM): the wave rule halves
    # launches past one wave (splitkv/gqa_uniform_waves.py, v0.2.61 and v0.2.67): 48 x 2,048
    # and 40 x 2,048 on one split writing its rows, the others on 2 splits; then replayed
    # from a CUDA graph with shorter requests.
    lengths = [keys] * requests
    case = random_gqa_case(lengths, 64, 8, 64, qlen=qlen, page_size=16, dtype=torch.bfloat16,
                           device="cuda", sinks=True)  # fmt: skip
    # The table one page wider than the requests, as `tools/gqa_plan_ab.py` times them (the
    # split count is chosen for the table's keys).
    plan = splitkv.plan_decode(requests, keys + 16, 64, qlen=qlen, kind="gqa", num_kv_heads=8,
                               head_dim=64, page_size=16, dtype=torch.bfloat16, device="cuda",
                               seq_lens=lengths)  # fmt: skip
    assert (plan.schedule, plan.block_h, plan.num_splits) == ("uniform", 8 * qlen, splits)
    assert plan.whole_pieces == (splits == 1)
    check(case, plan=plan, sinks=case.sinks)
    check_graph_replay(case, plan, [keys - 1 - i % 7 for i in range(requests)])

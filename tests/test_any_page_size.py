"""Page sizes that are not powers of two (vLLM sizes hybrid models' attention pages to their
state: 528, 1,056 keys and the like): key blocks then cross pages at any key, so every kernel's
addressing (`kernels/paged.py`, the Gluon producer's copies) must cut them there; and the Gluon
producer's copies shorter than the page allows (`copy_rows`). Each case equals the fp32
reference; on a GPU also bf16, long contexts, the Gluon tile and CUDA graphs."""

import pytest
import torch

import splitkv
from splitkv import warp_specialized
from splitkv.checks import MAX_PAGE_SIZE
from splitkv.device import DeviceSpec
from splitkv.testing import (
    capture_cuda_graph,
    check_against_reference,
    random_gqa_case,
    random_mla_case,
)

H200 = DeviceSpec.preset("h200")


def edge_lengths(page_size: int, qlen: int) -> list[int]:
    """0, a page's last key, one page, one past it, a length inside a later block (lengths
    under qlen raised to qlen)."""
    lengths = [0, page_size - 1, page_size, page_size + 1, 3 * page_size + 5, 150]
    return [n if n == 0 else max(n, qlen) for n in lengths]


def check_mla(case, **kwargs):
    out, lse = splitkv.mla_decode(*case.args, validate=True, **kwargs)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


def check_gqa(case, **kwargs):
    out, lse = splitkv.gqa_decode(*case.args, validate=True, **kwargs)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args))


def check_gluon_schedules(heads, qlen, page_size, device, **knobs):
    """70,001 keys beside shorter requests, bf16, on the balanced program loop and on uniform
    splits: each plan takes the Gluon kernels with `knobs` as asked, and equals the reference."""
    lengths = [70001, qlen, 4097, 12345]
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=page_size, dtype=torch.bfloat16,
                           device=device)  # fmt: skip
    for schedule in ("balanced", "uniform"):
        plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * page_size, heads,
                                   qlen=qlen, page_size=page_size, device=device,
                                   seq_lens=lengths, schedule=schedule, **knobs)  # fmt: skip
        assert plan.warp_specialized, (schedule, plan)
        assert all(getattr(plan, knob) == value for knob, value in knobs.items()), plan
        check_mla(case, plan=plan)


# (page size, qlen, plan knobs): pages shorter than a block and not dividing it (3, 12, 48
# against 16-64-key blocks), longer ones that blocks cross (100, 96 against 64), uniform
# splits in both grid orders, the balanced schedule, and page ids loaded a block ahead.
MLA_CASES = [
    (3, 1, {"num_splits": 3}),
    (12, 2, {"num_splits": 2, "block_n": 16}),
    (48, 1, {"schedule": "balanced"}),
    (100, 3, {"num_splits": 3, "grid_order": "batch_major"}),
    (96, 1, {"num_splits": 2, "block_n": 64}),
    # Page ids a block ahead: the look-ahead block starts at the split's last key, off any
    # block boundary.
    (100, 1, {"num_splits": 2, "page_prefetch": True, "block_n": 32}),
    (12, 2, {"num_splits": 3, "page_prefetch": True}),
    # The balanced 16-row default where bulk copies cannot run: two chains, no look-ahead.
    (100, 1, {"schedule": "balanced", "latent_chains": 2, "page_prefetch": False, "block_n": 64}),
]


@pytest.mark.parametrize("page_size,qlen,knobs", MLA_CASES)
def test_mla_pages_that_blocks_cross(page_size, qlen, knobs, dtype, device):
    lengths = edge_lengths(page_size, qlen)
    case = random_mla_case(lengths, 5, qlen=qlen, page_size=page_size, dtype=dtype, device=device)
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * page_size, 5, qlen=qlen,
                               page_size=page_size, dtype=dtype, device=device,
                               **knobs)  # fmt: skip
    check_mla(case, plan=plan)


@pytest.mark.parametrize(
    "page_size,knobs", [(100, {"schedule": "balanced", "program_loop": True}), (12, {})]
)
def test_the_64_row_triton_tile_divides_once_a_block(page_size, knobs, device):
    # 16 heads x qlen 4 on one 64-row head block: its page ids and slots come from one
    # division a block (kernels/paged.py BY_BLOCK), on the program loop and on uniform splits.
    lengths = edge_lengths(page_size, 4)
    case = random_mla_case(lengths, 16, qlen=4, page_size=page_size, dtype=torch.float16,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * page_size, 16, qlen=4,
                               page_size=page_size, dtype=torch.float16, device=device,
                               device_spec=H200, block_h=64, warp_specialized=False,
                               **knobs)  # fmt: skip
    check_mla(case, plan=plan)


@pytest.mark.parametrize(
    "knobs", [{"num_splits": 2}, {"schedule": "balanced", "page_prefetch": False}]
)
def test_the_32_row_triton_tile_on_64_key_blocks(knobs, device):
    # 16 heads x qlen 2 at page 100 on 64-key blocks and two chains, as the planner gives
    # the 32-row tile on GPUs: uniform splits of 512 keys or more, and balanced programs.
    lengths = edge_lengths(100, 2)
    case = random_mla_case(lengths, 16, qlen=2, page_size=100, dtype=torch.float16,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * 100, 16, qlen=2,
                               page_size=100, dtype=torch.float16, device=device,
                               warp_specialized=False, block_n=64, latent_chains=2,
                               **knobs)  # fmt: skip
    assert plan.block_h == 32
    check_mla(case, plan=plan)


@pytest.mark.parametrize("page_size,qlen", [(5, 1), (24, 2), (100, 1)])
def test_gqa_pages_that_blocks_cross(page_size, qlen, dtype, device):
    lengths = edge_lengths(page_size, qlen)
    case = random_gqa_case(lengths, 8, 2, 64, qlen=qlen, page_size=page_size, dtype=dtype,
                           device=device)  # fmt: skip
    check_gqa(case)
    check_gqa(case, plan=splitkv.plan_decode(
        len(lengths), case.page_table.shape[1] * page_size, 8, qlen=qlen, page_size=page_size,
        dtype=dtype, device=device, kind="gqa", num_kv_heads=2, head_dim=64,
        schedule="balanced"))  # fmt: skip


def test_shared_prefixes_on_pages_of_48_keys(dtype, device):
    # Two groups (2 and 3 shared pages); a member ends inside its group's prefix.
    lengths = [150, 100, 60, 130, 77]
    case = random_mla_case(lengths, 4, qlen=2, page_size=48, dtype=dtype, device=device,
                           prefix_groups=[([0, 1], 96), ([2, 3], 144)])  # fmt: skip
    groups = [([0, 1], 2), ([2, 3], 3)]
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, groups, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    gqa = random_gqa_case(lengths, 8, 2, 64, qlen=2, page_size=24, dtype=dtype, device=device,
                          prefix_groups=[([0, 1], 48), ([2, 3], 72)])  # fmt: skip
    out, lse = splitkv.gqa_decode_shared_prefix(*gqa.args, groups, validate=True)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args))


def test_page_sizes_in_bounds_are_planned_and_others_named():
    for page_size in (1, 7, 48, 528, MAX_PAGE_SIZE):
        splitkv.plan_decode(2, 4096, 16, page_size=page_size, device="meta", device_spec=H200)
    splitkv.plan_shared_prefix([([0, 1], 2)], 2, 10, 528, "cpu")
    for page_size in (0, MAX_PAGE_SIZE + 1):
        with pytest.raises(ValueError, match=r"^page_size: expected an int in"):
            splitkv.plan_decode(2, 4096, 16, page_size=page_size, device="meta")
        with pytest.raises(ValueError, match=r"^page_size: expected an int in"):
            splitkv.plan_shared_prefix([([0, 1], 2)], 2, 10, page_size, "cpu")


def test_the_gluon_tile_takes_every_page_copied_or_gathered(device):
    # Its copies are of the largest power of two dividing the page (at most a block); a copy
    # of fewer than 8 rows would cut its buffers' swizzle pattern, so those pages' key rows are
    # gathered one by one (kernels/gathered_keys.py), and their plans have no copy_rows.
    def plan(page_size, **knobs):
        return splitkv.plan_decode(8, 8192, 128, page_size=page_size, device="meta",
                                   device_spec=H200, **knobs)  # fmt: skip

    for page_size in (8, 24, 48, 96, 528):
        assert plan(page_size).warp_specialized and plan(page_size).copy_rows >= 8, page_size
    assert [warp_specialized.copy_rows(p, 64) for p in (24, 48, 96, 528, 256)] == [
        8, 16, 32, 16, 64
    ]  # fmt: skip
    for page_size in (1, 2, 4, 12, 100):
        assert warp_specialized.gathers_keys(page_size), page_size
        gathered = plan(page_size, warp_specialized=True)
        assert gathered.warp_specialized and gathered.copy_rows == 0, page_size
        assert plan(page_size).warp_specialized, page_size  # by default too
    assert not warp_specialized.gathers_keys(24)


def test_bulk_copies_of_whole_blocks_need_pages_that_blocks_divide():
    def plan(page_size, **knobs):
        return splitkv.plan_decode(8, 68096, 16, page_size=page_size, device="meta",
                                   device_spec=H200, warp_specialized=False,
                                   **knobs)  # fmt: skip

    assert plan(128).kv_tma and not plan(96).kv_tma and not plan(192 + 8).kv_tma
    with pytest.raises(ValueError, match=r"^kv_tma: needs a page size that is a multiple of"):
        plan(96, kv_tma=True, block_n=64)


def test_a_table_past_int32_keys_is_refused(device):
    page_size = 8192
    case = random_mla_case([40], 2, page_size=page_size, dtype=torch.float16, device=device)
    wide = torch.zeros(1, 2**31 // page_size, dtype=torch.int32, device=device)
    wide[:, : case.page_table.shape[1]] = case.page_table
    with pytest.raises(ValueError, match=r"^page_table: expected at most 262143 columns"):
        splitkv.mla_decode(case.q, case.kv_cache, wide, case.seq_lens)


@pytest.mark.gpu
@pytest.mark.triton_3_6
@pytest.mark.parametrize("page_size", [24, 48, 528])
@pytest.mark.parametrize("heads,qlen", [(128, 1), (16, 4), (16, 1)])
def test_gluon_tile_on_long_contexts(page_size, heads, qlen, device):
    # 64-row tiles, the alternating consumers (128 heads) and keys as rows (16 heads x qlen 1).
    check_gluon_schedules(heads, qlen, page_size, device)


@pytest.mark.gpu
@pytest.mark.triton_3_6
@pytest.mark.parametrize("page_size", [1, 4, 12, 100])
@pytest.mark.parametrize("heads,qlen", [(128, 1), (12, 4), (16, 2), (12, 1)])
def test_gluon_tile_on_gathered_pages(page_size, heads, qlen, device):
    # Pages a bulk copy cannot take: the producer gathers each key row (kernels/
    # gathered_keys.py) for the 64-row tiles, the alternating consumers (128 heads) and keys
    # as rows (32 and 16 rows).
    assert warp_specialized.gathers_keys(page_size)
    check_gluon_schedules(heads, qlen, page_size, device, warp_specialized=True)


@pytest.mark.gpu
@pytest.mark.parametrize("page_size", [100, 96, 1056])
def test_triton_tiles_on_long_contexts(page_size, device):
    lengths = [70001, 2, 4097, 12345]
    mla = random_mla_case(lengths, 16, qlen=2, page_size=page_size, dtype=torch.bfloat16,
                          device=device)  # fmt: skip
    # On Hopper every page takes the Gluon kernels by default: ask for the Triton tiles.
    max_seq_len = mla.page_table.shape[1] * page_size
    triton = splitkv.plan_decode(len(lengths), max_seq_len, 16, qlen=2, page_size=page_size,
                                 device=device, warp_specialized=False)  # fmt: skip
    check_mla(mla, plan=triton)
    gqa = random_gqa_case(lengths, 32, 8, 128, qlen=2, page_size=page_size,
                          dtype=torch.bfloat16, device=device)  # fmt: skip
    check_gqa(gqa)


@pytest.mark.gpu
def test_replays_with_new_lengths_on_pages_of_48_keys(device):
    # Every request owns 9,000 keys' pages; each replay reads a different prefix of them.
    case = random_mla_case([9000] * 4, 16, qlen=1, page_size=48, dtype=torch.bfloat16,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(4, case.page_table.shape[1] * 48, 16, page_size=48,
                               device=device, schedule="balanced")  # fmt: skip
    out = torch.empty(4, 1, 16, 512, dtype=torch.bfloat16, device=device)
    lse = torch.empty(4, 1, 16, dtype=torch.float32, device=device)
    graph = capture_cuda_graph(lambda: splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse))
    for new in ([48, 9000, 1, 4000], [8999, 49, 96, 0]):
        case.seq_lens.copy_(torch.tensor(new, dtype=torch.int32))
        graph.replay()
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


@pytest.mark.gpu
@pytest.mark.triton_3_6
@pytest.mark.parametrize(
    "heads,qlen,copy_rows", [(12, 4, 16), (12, 4, 8), (128, 1, 16), (12, 2, 32)]
)
def test_key_blocks_in_shorter_copies(heads, qlen, copy_rows, device):
    # Copies shorter than the page allows (`plan_decode(copy_rows=)`): the same keys in the
    # same buffers.
    check_gluon_schedules(heads, qlen, 64, device, copy_rows=copy_rows)

"""The warp-specialized Gluon stage 1 for MLA (kernels/mla_warp_specialized.py, 64-row tiles and
8-32 rows with the keys as rows, kernels/mla_keys_as_rows.py):
where the planner takes it (here, for the H200 preset), and on a GPU that it equals the
reference for every row count, page size, split count, length and cache layout it accepts."""

import pytest
import torch
import triton

import splitkv
from splitkv import warp_specialized
from splitkv.device import DeviceSpec
from splitkv.testing import capture_cuda_graph, check_against_reference, random_mla_case

# The Gluon kernels are Triton 3.6's (warp_specialized.GLUON_TRITON).
pytestmark = pytest.mark.triton_3_6

H200 = DeviceSpec.preset("h200")


def planned(heads, qlen=1, **knobs):
    return splitkv.plan_decode(8, 8192, heads, qlen=qlen, device="meta", device_spec=H200,
                               **knobs)  # fmt: skip


@pytest.mark.parametrize("heads,qlen", [(128, 1), (64, 1), (40, 1), (16, 4), (16, 8), (12, 8)])
def test_planner_takes_it_for_64_row_tiles_on_hopper(heads, qlen):
    plan = planned(heads, qlen)
    assert plan.warp_specialized and plan.block_h == 64
    # Two or more head blocks: the alternating consumers, on 32-key blocks (their ring: 4
    # stages; the Triton tile a call falls back to takes the same blocks in 2 stages).
    turns = heads * qlen > 64
    assert plan.alternate_blocks == turns
    assert (plan.block_n, plan.split_num_stages, plan.latent_chains) == (32 if turns else 64, 2, 1)


@pytest.mark.parametrize(
    "heads,qlen,knobs",
    [
        (16, 1, {"schedule": "balanced", "program_loop": False}),  # one program a piece
        (128, 1, {"schedule": "balanced", "program_loop": False}),
        (128, 1, {"block_n": 32}),  # a knob of the Triton tile pinned
        (128, 1, {"page_prefetch": False}),
        (128, 1, {"dtype": torch.float32}),
    ],
)
def test_planner_leaves_it_where_it_cannot_or_should_not_run(heads, qlen, knobs):
    assert not planned(heads, qlen, **knobs).warp_specialized


def test_default_splits_keep_the_partials_within_the_key_bytes():
    # H200, 8k x 1: 128 heads best at 32 splits (21.3 us; 64: 22.7), 16 heads x qlen 4 at 64
    # (18.6 us; the Triton tile's 128: 20.3), session 8; the cap (36 and 72) rounded down to
    # a power of two (128 heads 19.8 -> 18.4 us, session 25).
    h200 = {"device": "meta", "device_spec": H200}
    wide = splitkv.plan_decode(1, 8192, 128, **h200)
    mtp = splitkv.plan_decode(1, 8192, 16, qlen=4, **h200)
    assert (wide.num_splits, mtp.num_splits) == (32, 64)
    assert wide.warp_specialized and mtp.warp_specialized
    triton = splitkv.plan_decode(1, 8192, 128, warp_specialized=False, **h200)
    assert triton.num_splits == 64
    assert planned(128, num_splits=64).num_splits == 64  # an explicit count is kept


def test_planner_takes_it_for_the_balanced_program_loop():
    # MTP and 128-head ragged batches: the balanced schedule's program loop on the Gluon tile,
    # one program per SM (a wave: 132 programs over the head blocks).
    ragged = [1, 63, 64, 65, 4096, 4097, 65536, 327600]
    h200 = {"device": "meta", "device_spec": H200}
    mtp = splitkv.plan_decode(8, 327600, 12, qlen=4, seq_lens=ragged, **h200)
    wide = splitkv.plan_decode(8, 327600, 128, seq_lens=ragged, **h200)
    for plan, programs in ((mtp, 132), (wide, 66)):
        assert plan.schedule == "balanced" and plan.program_loop and plan.warp_specialized
        assert plan.num_programs == programs
        # 2 64-key blocks, measured on the Gluon loop (docs/perf.md v0.2.8e); for the
        # alternating consumers (128 heads: two head blocks) in 32-key units.
        turns = plan is wide
        assert plan.alternate_blocks == turns and plan.block_n == (32 if turns else 64)
        assert plan.piece_cost == (4 if turns else 2)
    # Shares of one block or less leave nothing to overlap: the Triton tile.
    tiny = splitkv.plan_decode(8, 327600, 128, seq_lens=[1, 2, 3, 70, 1, 1, 1, 200],
                               schedule="balanced", **h200)  # fmt: skip
    assert tiny.schedule == "balanced" and not tiny.warp_specialized


@pytest.mark.parametrize("heads,qlen", [(12, 1), (16, 1), (8, 1), (12, 2), (16, 2), (9, 2)])
def test_planner_takes_the_keys_as_rows_for_8_to_32_rows(heads, qlen):
    rows = 16 if heads * qlen <= 16 else 32
    plan = planned(heads, qlen)
    assert plan.warp_specialized and plan.block_h == rows and plan.num_head_blocks == 1
    assert plan.split_num_warps == 4  # one consumer warpgroup
    ragged = splitkv.plan_decode(8, 327600, heads, qlen=qlen, seq_lens=RAGGED[:8],
                                 device="meta", device_spec=H200)  # fmt: skip
    assert ragged.schedule == "balanced" and ragged.program_loop and ragged.warp_specialized
    # One program per SM: one wave of them (ragged 131.8 us with two a SM, 116.1 with one).
    # A piece costs 2 blocks at 16 rows, 4 at 32 (docs/perf.md v0.2.23).
    assert ragged.block_h == rows and ragged.num_programs == 132
    assert ragged.piece_cost == (2 if rows == 16 else 4)


def test_keys_as_rows_splits_fill_waves_of_one_program_per_sm():
    # H200, 16 heads: 327k x 1 best at 128 splits (94.0 us; 256: 100.2), 327k x 8 at 16
    # (673.1; 32: 682.3), 68k x 8 at 16 (149.9; 32: 156.8), docs/perf.md v0.2.9a; 16-row
    # tiles fill 70% of their last wave (v0.2.9g: 48 requests, 2 splits). (By default the
    # batches of 8 and 48 run the program loop; these are their uniform split counts.)
    h200 = {"device": "meta", "device_spec": H200, "schedule": "uniform"}
    for batch, context, splits in ((1, 327600, 128), (8, 327600, 16), (8, 68096, 16),
                                   (48, 327600, 2)):  # fmt: skip
        plan = splitkv.plan_decode(batch, context, 16, **h200)
        assert plan.warp_specialized and plan.num_splits == splits, (batch, context)
    triton = splitkv.plan_decode(8, 327600, 16, warp_specialized=False, **h200)
    assert triton.num_splits == 32 and not triton.program_loop


def test_a_16_row_balanced_plan_off_the_gluon_kernel_keeps_one_program_a_piece():
    ragged = splitkv.plan_decode(8, 327600, 12, seq_lens=RAGGED[:8], warp_specialized=False,
                                 device="meta", device_spec=H200)  # fmt: skip
    assert ragged.schedule == "balanced" and not ragged.program_loop
    assert ragged.piece_cost == 0


def test_block_h_pads_17_to_32_rows_to_the_64_row_tile():
    plan = planned(12, 2, warp_specialized=True, block_h=64)
    assert plan.warp_specialized and plan.block_h == 64 and plan.num_head_blocks == 1
    assert plan.split_num_warps == 8
    assert planned(12, 1, block_h=32).block_h == 32  # the Triton tile, padded
    assert planned(128, 1, block_h=32).num_head_blocks == 4


def test_keys_as_rows_always_below_64_rows_and_opt_in_at_64():
    assert planned(12).keys_as_rows and planned(16, 2).keys_as_rows
    assert not planned(128).keys_as_rows and not planned(12, 4).keys_as_rows
    wide = planned(12, 4, keys_as_rows=True)
    assert wide.keys_as_rows and wide.block_h == 64 and wide.split_num_warps == 8
    assert not planned(12, warp_specialized=False).keys_as_rows  # the Triton tile
    # Asking for it asks for the Gluon kernel, even where its default would not take the plan.
    short = splitkv.plan_decode(1, 8192, 16, qlen=4, num_splits=128, keys_as_rows=True,
                                device="meta", device_spec=H200)  # fmt: skip
    assert short.warp_specialized and short.keys_as_rows
    with pytest.raises(ValueError, match="keys_as_rows: needs the warp-specialized kernel"):
        planned(128, warp_specialized=False, keys_as_rows=True)
    with pytest.raises(ValueError, match="keys_as_rows: a 16-row head block needs it"):
        planned(12, keys_as_rows=False)
    with pytest.raises(TypeError, match="keys_as_rows: expected a bool"):
        planned(128, keys_as_rows=1)


def test_consumer_groups_one_below_64_rows_two_as_an_opt_in():
    assert planned(12).consumer_groups == planned(12, 2).consumer_groups == 1
    assert planned(128).consumer_groups == planned(12, 4, keys_as_rows=True).consumer_groups == 2
    assert planned(12, warp_specialized=False).consumer_groups == 0  # the Triton tile
    two = planned(12, 2, consumer_groups=2)
    assert two.keys_as_rows and two.block_h == 32 and two.consumer_groups == 2
    # The Triton tile a call falls back to keeps its warps.
    assert two.split_num_warps == planned(12, 2).split_num_warps
    with pytest.raises(ValueError, match="consumer_groups: expected an int in"):
        planned(12, consumer_groups=3)
    with pytest.raises(ValueError, match="consumer_groups: needs the warp-specialized keys"):
        planned(12, warp_specialized=False, consumer_groups=2)
    with pytest.raises(ValueError, match="consumer_groups: needs the warp-specialized keys"):
        planned(128, consumer_groups=1)  # the wide tile
    with pytest.raises(ValueError, match="consumer_groups: a 64-row head block takes 2"):
        planned(12, 4, keys_as_rows=True, consumer_groups=1)


@pytest.mark.parametrize(
    "knobs,error",
    [
        ({"block_h": 8}, "block_h: expected an int in"),
        ({"block_h": 48}, "block_h: expected a power of two"),
        ({"block_h": 128}, "block_h: expected an int in"),
        ({"block_h": 16, "kind": "gqa", "num_kv_heads": 4}, "block_h: MLA only"),
    ],
)
def test_block_h_out_of_range_names_the_argument(knobs, error):
    with pytest.raises(ValueError, match=error):
        planned(16, **knobs)


def test_planner_leaves_it_where_splits_are_one_block():
    # 16 heads x qlen 4, 8k x 1 at 128 splits: 21.0 us against the Triton tile's 20.3.
    plan = splitkv.plan_decode(1, 8192, 16, qlen=4, num_splits=128, device="meta",
                               device_spec=H200)  # fmt: skip
    assert plan.block_h == 64 and not plan.warp_specialized


def test_planner_leaves_it_off_blackwell_and_the_interpreter():
    b200 = DeviceSpec.preset("b200")
    assert not splitkv.plan_decode(8, 8192, 128, device="meta", device_spec=b200).warp_specialized
    assert not splitkv.plan_decode(8, 8192, 128, device="cpu").warp_specialized


@pytest.mark.parametrize("release", ["3.4.0", "3.5.1", "3.7.1", "3.9.0"])
def test_other_tritons_plan_the_triton_kernels_and_say_why(monkeypatch, release):
    # The kernels are written in Triton 3.6's Gluon, which changes with every release: 3.5 and
    # 3.7-3.9 refuse to compile them (tools/compile_check.py under each), so the H200's plans
    # there take the Triton tile, which compiles on all of them.
    monkeypatch.setattr(triton, "__version__", release)
    warp_specialized.gluon_available.cache_clear()
    splitkv.plan_decode.forget()  # plans without lengths are remembered
    try:
        assert not planned(128).warp_specialized and not planned(16).warp_specialized
        with pytest.raises(
            ValueError, match=rf"needs Triton 3.6's Gluon, installed: Triton {release}"
        ):
            planned(128, warp_specialized=True)
    finally:
        warp_specialized.gluon_available.cache_clear()
        splitkv.plan_decode.forget()


def test_copy_rows_default_to_the_most_a_page_allows_and_bad_ones_are_named():
    # A block in one copy at page 64 (64 keys; the alternating consumers' blocks are 32), in
    # 16-row copies at page 48; none off the Gluon kernels.
    assert (planned(12, 4).copy_rows, planned(128).copy_rows) == (64, 32)
    assert planned(12, 4, page_size=48).copy_rows == 16
    assert planned(12, 4, copy_rows=16).copy_rows == 16
    assert planned(12, 4, warp_specialized=False).copy_rows == 0
    for knobs, bounds in (({"copy_rows": 128}, "8, 64"), ({"copy_rows": 4}, "8, 64"),
                          ({"copy_rows": 24}, "8, 64"), ({"copy_rows": 64}, "8, 32"),
                          ({"copy_rows": 32, "page_size": 48}, "8, 16")):  # fmt: skip
        heads = 128 if knobs["copy_rows"] == 64 else 12
        with pytest.raises(
            ValueError, match=rf"^copy_rows: expected a power of two in \[{bounds}\]"
        ):
            planned(heads, 4 if heads == 12 else 1, **knobs)
    with pytest.raises(ValueError, match=r"^copy_rows: needs the warp-specialized kernel"):
        planned(12, 4, copy_rows=16, warp_specialized=False)
    # Pages a whole 8-row copy would cross: the keys are gathered row by row, no copies.
    assert planned(12, 4, page_size=100, warp_specialized=True).copy_rows == 0
    with pytest.raises(ValueError, match=r"^copy_rows: pages of 100 keys are gathered row by"):
        planned(12, 4, page_size=100, copy_rows=8, warp_specialized=True)


def test_the_h100_copies_its_single_64_row_blocks_in_16_rows():
    # run195 (docs/perf.md session 62): 16-row copies on the 64-row tile of one head block a
    # request, on either schedule; whole blocks on the alternating consumers and keys as rows;
    # a page that allows less keeps less.
    def h100(heads, qlen=1, **knobs):
        return splitkv.plan_decode(8, 8192, heads, qlen=qlen, device="meta",
                                   device_spec=DeviceSpec.preset("h100"), **knobs)  # fmt: skip

    assert [h100(h, q).copy_rows for h, q in ((12, 4), (16, 4), (32, 2), (64, 1))] == [16] * 4
    assert h100(12, 4, seq_lens=[1, 63, 4096, 8192] * 2).copy_rows == 16  # balanced
    assert (h100(128).copy_rows, h100(12).copy_rows, h100(12, 2).copy_rows) == (32, 64, 64)
    assert (h100(12, 4, page_size=24).copy_rows, h100(12, 4, copy_rows=64).copy_rows) == (8, 64)
    assert planned(12, 4).copy_rows == 64  # the H200 is not timed yet


def test_asking_for_it_where_it_cannot_run_names_the_reason():
    with pytest.raises(ValueError, match="warp_specialized: needs the uniform schedule or"):
        planned(128, schedule="balanced", program_loop=False, warp_specialized=True)
    with pytest.raises(ValueError, match="warp_specialized: needs a GPU"):
        splitkv.plan_decode(8, 8192, 128, device="cpu", warp_specialized=True)
    with pytest.raises(TypeError, match="warp_specialized: expected a bool"):
        planned(128, warp_specialized=1)


def test_turning_it_off_keeps_the_same_triton_tile():
    # (The alternating consumers' plan falls back to the Triton tile of its 32-key blocks.)
    on, off = planned(128, alternate_blocks=False), planned(128, warp_specialized=False)
    assert not off.warp_specialized
    for knob in ("block_h", "block_n", "split_num_warps", "split_num_stages", "num_splits"):
        assert getattr(on, knob) == getattr(off, knob)


# On the GPU: lengths around blocks, pages and splits, an empty request and one of just the
# qlen query tokens (its first rows see fewer keys than a block's worth, the last splits none).
LENGTHS = [0, 1, 8, 63, 64, 65, 127, 1000, 4097, 20000]


def lengths_for(qlen):
    return [n if n == 0 else max(n, qlen) for n in LENGTHS]


def check(case, plan, **kwargs):
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True, **kwargs)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    return check_against_reference(out, lse, ref_out, ref_lse)


def gpu_plan(case, heads, qlen, page_size, dtype, **knobs):
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=dtype, device="cuda",
                               schedule="uniform", warp_specialized=True, **knobs)  # fmt: skip
    assert plan.warp_specialized
    return plan


# Head counts and query lengths for both consumers: 64-row tiles (128 heads, MTP; 12 x 2 padded
# by block_h=64) and 8-32 rows with the keys as rows (12 and 16 heads at qlen 1 and 2, 8 heads
# padded to 16, 12 heads padded to 32 by block_h=32; several narrow head blocks a request).
SHAPES = [(128, 1, None), (40, 1, None), (16, 4, None), (12, 8, None), (16, 8, None),
          (12, 2, 64), (12, 1, None), (16, 1, None), (8, 1, None), (12, 2, None), (16, 2, None),
          (12, 1, 32), (12, 4, 32), (40, 1, 16)]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen,block_h", SHAPES)
@pytest.mark.parametrize("page_size", [8, 16, 64, 256])
def test_matches_the_reference(heads, qlen, block_h, page_size):
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    check(case, gpu_plan(case, heads, qlen, page_size, torch.bfloat16, block_h=block_h))


# The consumers' opt-ins: keys as rows on 64-row blocks (two warpgroups of 32 query rows on one
# ring), and 16- or 32-row blocks on two warpgroups of 8 or 16 rows (consumer_groups=2).
OPT_INS = [(heads, qlen, {"keys_as_rows": True}) for heads, qlen in
           ((12, 4), (16, 4), (16, 8), (128, 1))] + [
           (heads, qlen, {"consumer_groups": 2}) for heads, qlen in
           ((12, 1), (12, 2), (16, 2), (8, 1))]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen,knobs", OPT_INS)
@pytest.mark.parametrize("page_size", [8, 64])
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_opt_in_consumers(heads, qlen, knobs, page_size, schedule):
    lengths = lengths_for(qlen) if schedule == "uniform" else lengths_for_ragged(qlen)
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    batch, columns = case.page_table.shape
    programs = 7 if schedule == "balanced" else None
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=torch.bfloat16, device="cuda",
                               schedule=schedule, num_programs=programs, warp_specialized=True,
                               **knobs)  # fmt: skip
    assert plan.keys_as_rows and all(getattr(plan, k) == v for k, v in knobs.items())
    plan.workspace.partial_o.fill_(float("nan"))
    plan.workspace.partial_lse.fill_(float("nan"))
    check(case, plan)


@pytest.mark.gpu
@pytest.mark.parametrize("num_splits", [1, 3, 16, 64])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("heads,qlen", [(16, 4), (12, 1)])
def test_split_counts_and_dtypes(num_splits, dtype, heads, qlen):
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, dtype=dtype, device="cuda")
    check(case, gpu_plan(case, heads, qlen, 64, dtype, num_splits=num_splits))


def scale_keys_by_position(case, page_size, factor):
    """Each request's key row t (its latent values too) multiplied by factor(t / length): a
    climbing factor makes the scores' maximum grow block after block, so the consumers'
    online softmax must rescale O many times, not only after its first block."""
    pool = case.kv_cache.view(-1, case.kv_cache.shape[-1])
    for request, length in enumerate(case.seq_lens.tolist()):
        t = torch.arange(length, device=pool.device)
        rows = case.page_table[request, t // page_size].long() * page_size + t % page_size
        scale = factor(t.float() / max(length, 1)).to(pool.dtype)
        pool[rows] = pool[rows] * scale[:, None]


# Scores whose maximum climbs ~2^4 to 2^40 over a request (rescales at many blocks), falls
# (the first blocks' maximum stays), or jumps from very negative to positive halfway.
FACTORS = {"climbing": lambda x: 1.0 + 24.0 * x, "falling": lambda x: 25.0 - 24.0 * x,
           "jump": lambda x: torch.where(x < 0.5, -8.0, 12.0)}  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("heads,qlen", [(12, 1), (12, 2), (12, 4), (128, 1)])
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_scores_that_climb_fall_or_jump(factor, heads, qlen, schedule):
    # Random scores set a row's maximum in its first blocks; these move it at many blocks, or
    # never after the first, or from far below zero to far above: the online softmax's
    # rescale of O (and of the 64-row tile's per-score sums) then carries the result (a lazy
    # rescale that skipped it lost in session 16, a lazy maximum was level in session 33:
    # docs/perf.md).
    lengths = lengths_for(qlen) if schedule == "uniform" else lengths_for_ragged(qlen)
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=64, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    scale_keys_by_position(case, 64, FACTORS[factor])
    if schedule == "uniform":
        plan = gpu_plan(case, heads, qlen, 64, torch.bfloat16)
    else:
        plan = balanced_gpu_plan(case, heads, qlen, 64, torch.bfloat16, 7, None)
    check(case, plan)


@pytest.mark.gpu
@pytest.mark.parametrize("heads", [128, 16])
def test_long_contexts_at_the_far_end_of_the_pool(heads):
    case = random_mla_case([327600, 65536, 1], heads, dtype=torch.bfloat16, device="cuda",
                           first_page=20000)  # fmt: skip
    check(case, gpu_plan(case, heads, 1, 64, torch.bfloat16))


@pytest.mark.gpu
def test_a_pool_that_cannot_be_described_falls_back_to_the_triton_tile():
    # Rows 1,152 elements apart inside a wider buffer: not page-contiguous, no descriptors.
    case = random_mla_case(LENGTHS, 128, dtype=torch.bfloat16, device="cuda")
    wide = torch.full((*case.kv_cache.shape[:2], 640), float("nan"), dtype=torch.bfloat16,
                      device="cuda")  # fmt: skip
    wide[..., :576] = case.kv_cache
    strided = wide[..., :576]
    args = (case.q, strided, case.page_table, case.seq_lens)
    out, lse = splitkv.mla_decode(*args, plan=gpu_plan(case, 128, 1, 64, torch.bfloat16))
    ref_out, ref_lse = splitkv.reference.mla_decode(*args)
    check_against_reference(out, lse, ref_out, ref_lse)


def strided_query_args(case):
    """The case's arguments with q as a view whose rows are 640 elements apart (NaN between
    them): q's rows cannot be described for bulk copies."""
    wide = torch.full((*case.q.shape[:3], 640), float("nan"), dtype=case.q.dtype,
                      device=case.q.device)  # fmt: skip
    wide[..., :576] = case.q
    return (wide[..., :576], case.kv_cache, case.page_table, case.seq_lens)


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen", [(16, 8), (12, 1)])
def test_strided_queries_load_through_registers(heads, qlen):
    # q a view with rows 640 elements apart: no bulk copies of it, the consumers load the rows.
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    args = strided_query_args(case)
    out, lse = splitkv.mla_decode(*args, plan=gpu_plan(case, heads, qlen, 64, torch.bfloat16))
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*args))


@pytest.mark.gpu
def test_shared_prefix_cascade_suffix_pass():
    # The cascade's suffix pass reads each request from its prefix's end, through its
    # page-table row shifted by the prefix's pages.
    lengths = [70000, 66000, 65600, 3000]
    case = random_mla_case(lengths, 16, qlen=4, dtype=torch.bfloat16, device="cuda",
                           prefix_groups=[([0, 1, 2], 65536)])  # fmt: skip
    groups = [([0, 1, 2], 65536 // 64)]
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, groups, validate=True)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference(out, lse, ref_out, ref_lse)


# The balanced program loop: ragged lengths around blocks and pages, an empty request between
# others, one long request; program counts from one (a share crossing every request) to more
# programs than key blocks (empty programs inside a request's range).
RAGGED = [1, 63, 64, 65, 0, 4097, 20000, 2, 129, 1000]


def balanced_gpu_plan(case, heads, qlen, page_size, dtype, num_programs=None, block_h=None):
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=dtype, device="cuda",
                               schedule="balanced", num_programs=num_programs,
                               warp_specialized=True, block_h=block_h)  # fmt: skip
    assert plan.program_loop
    # Stale NaN in every partial slot and nonsense program ranges: the merge may read only
    # what this call wrote.
    plan.workspace.partial_o.fill_(float("nan"))
    plan.workspace.partial_lse.fill_(float("nan"))
    plan.workspace.piece_ranges.fill_(-(10**6))
    return plan


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen,block_h", [(128, 1, None), (40, 1, None), (12, 4, None),
                                               (16, 8, None), (12, 2, 64), (12, 1, None),
                                               (16, 2, None), (8, 1, None),
                                               (12, 4, 32)])  # fmt: skip
@pytest.mark.parametrize("page_size", [8, 64, 256])
@pytest.mark.parametrize("num_programs", [None, 1, 7, 2000])
def test_balanced_program_loop_matches_the_reference(heads, qlen, block_h, page_size,
                                                     num_programs):  # fmt: skip
    case = random_mla_case(lengths_for_ragged(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    check(case, balanced_gpu_plan(case, heads, qlen, page_size, torch.bfloat16, num_programs,
                                  block_h))  # fmt: skip


def check_into_strided_outputs(case, plan, return_lse):
    """Decode into an out whose heads are 1,024 elements apart and, when asked, an lse whose
    requests are 2 x qlen x heads apart (NaN-filled), then against the reference."""
    batch, qlen, heads, _ = case.q.shape
    out = torch.full((batch, qlen, heads, 1024), float("nan"), dtype=case.q.dtype,
                     device=case.q.device)[..., :512]  # fmt: skip
    lse = torch.full((batch, 2 * qlen, heads), float("nan"), device=case.q.device)[:, :qlen]
    got_out, got_lse = splitkv.mla_decode(*case.args, plan=plan, out=out,
                                          lse=lse if return_lse else None,
                                          return_lse=return_lse)  # fmt: skip
    assert got_out.data_ptr() == out.data_ptr()
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference(got_out, got_lse if return_lse else None, ref_out,
                            ref_lse if return_lse else None)  # fmt: skip


def lengths_for_ragged(qlen):
    return [n if n == 0 else max(n, qlen) for n in RAGGED]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("heads", [128, 12])
def test_balanced_program_loop_far_pool_and_dtypes(dtype, heads):
    case = random_mla_case([327600, 1, 65536, 0, 70], heads, dtype=dtype, device="cuda",
                           first_page=20000)  # fmt: skip
    check(case, balanced_gpu_plan(case, heads, 1, 64, dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen", [(16, 4), (12, 1)])
def test_balanced_program_loop_strided_queries(heads, qlen):
    # q a view with rows 640 elements apart: no bulk copies of it, the consumers load the rows.
    case = random_mla_case(lengths_for_ragged(qlen), heads, qlen=qlen, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    args = strided_query_args(case)
    plan = balanced_gpu_plan(case, heads, qlen, 64, torch.bfloat16, num_programs=7)
    out, lse = splitkv.mla_decode(*args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*args))


@pytest.mark.gpu
def test_balanced_program_loop_empty_batch():
    case = random_mla_case([0, 0, 0], 16, qlen=4, dtype=torch.bfloat16, device="cuda",
                           table_columns=4)  # fmt: skip
    check(case, balanced_gpu_plan(case, 16, 4, 64, torch.bfloat16, num_programs=5))


@pytest.mark.gpu
def test_balanced_program_loop_replays_with_new_lengths():
    # One captured graph, one grid: the schedule follows the lengths written before each replay.
    heads, qlen = 16, 4
    case = random_mla_case([4800] * 4, heads, qlen=qlen, page_size=16, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    q, kv, table, lens = case.args
    plan = balanced_gpu_plan(case, heads, qlen, 16, torch.bfloat16, num_programs=40)
    out = torch.empty(4, qlen, heads, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(4, qlen, heads, device="cuda")
    graph = capture_cuda_graph(
        lambda: splitkv.mla_decode(q, kv, table, lens, plan=plan, out=out, lse=lse)
    )
    for lengths in ([4800, 4, 4, 4], [0, 0, 7, 0], [130, 4097, 129, 500], [4800] * 4):
        lens.copy_(torch.tensor(lengths, dtype=torch.int32))
        graph.replay()
        check_against_reference(out, lse, *splitkv.reference.mla_decode(q, kv, table, lens))


@pytest.mark.gpu
@pytest.mark.parametrize(
    "heads,qlen,page_size", [(12, 1, 64), (16, 2, 8), (12, 1, 256), (12, 4, 64), (16, 4, 16)]
)
@pytest.mark.parametrize("num_programs", [None, 7])
@pytest.mark.parametrize("return_lse", [True, False])
def test_program_loop_whole_pieces_into_strided_outputs(heads, qlen, page_size, num_programs,
                                                       return_lse):  # fmt: skip
    # whole_pieces (the keys-as-rows loop; on by default at qlen 1; opt-in on the 64-row loop's
    # two warpgroups at qlen 4): one-piece requests' rows go straight to out (here a view whose
    # heads are 1,024 elements apart) and, when asked, to a strided lse (requests 2 x heads
    # apart); the merge folds the rest. Against the reference.
    case = random_mla_case(lengths_for_ragged(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=torch.bfloat16, device="cuda",
                               schedule="balanced", num_programs=num_programs,
                               warp_specialized=True, whole_pieces=True)  # fmt: skip
    assert plan.whole_pieces and plan.program_loop
    assert plan.keys_as_rows == (heads * qlen <= 32)
    plan.workspace.partial_o.fill_(float("nan"))
    plan.workspace.partial_lse.fill_(float("nan"))
    check_into_strided_outputs(case, plan, return_lse)
    ranges = plan.workspace.piece_ranges.cpu()
    lengths = lengths_for_ragged(qlen)
    assert any(n > 0 and ranges[b, 0] == ranges[b, 1] for b, n in enumerate(lengths))

"""The 64-row Gluon tile's consumers taking turns (`alternate_blocks`,
kernels/mla_alternate_blocks.py): where the planner accepts it, and on a GPU that it equals the
reference for every head count, page size, split count, length and score shape it runs."""

import pytest
import torch
from test_warp_specialized import (
    FACTORS,
    check,
    lengths_for,
    lengths_for_ragged,
    scale_keys_by_position,
)

import splitkv
from splitkv import warp_specialized as ws
from splitkv.device import DeviceSpec
from splitkv.testing import capture_cuda_graph, check_against_reference, random_mla_case

# The Gluon kernels are Triton 3.6's (warp_specialized.GLUON_TRITON).
pytestmark = pytest.mark.triton_3_6

H200 = DeviceSpec.preset("h200")


def planned(heads, qlen=1, **knobs):
    return splitkv.plan_decode(8, 8192, heads, qlen=qlen, device="meta", device_spec=H200,
                               **knobs)  # fmt: skip


def test_on_by_default_for_two_head_blocks_and_off_when_asked():
    assert planned(16, 8).alternate_blocks and planned(12, 8).alternate_blocks
    assert not planned(128, alternate_blocks=False).alternate_blocks
    assert not planned(12, 4).alternate_blocks  # one 64-row head block (measured slower)
    assert not planned(40).alternate_blocks
    assert not planned(12).alternate_blocks  # 16 rows: the keys-as-rows consumer
    assert not planned(12, 4, keys_as_rows=True).alternate_blocks
    assert planned(12, 4, alternate_blocks=True).alternate_blocks
    plan = planned(128)
    assert plan.alternate_blocks and plan.warp_specialized and plan.block_h == 64
    assert plan.block_n == 32  # the merge cuts splits on the kernel's 32-key blocks
    assert planned(16, 8, alternate_blocks=True).alternate_blocks
    loop = planned(128, schedule="balanced", alternate_blocks=True)
    assert loop.program_loop and loop.alternate_blocks
    two = planned(128, schedule="balanced", alternate_blocks=False)
    assert loop.piece_cost == 2 * two.piece_cost  # the same cost in 32-key units


def test_asking_for_it_where_it_cannot_run_names_the_reason():
    with pytest.raises(ValueError, match="alternate_blocks: needs the warp-specialized 64-row"):
        planned(12, alternate_blocks=True)  # a 16-row head block
    with pytest.raises(ValueError, match="alternate_blocks: needs the warp-specialized 64-row"):
        planned(12, 4, keys_as_rows=True, alternate_blocks=True)
    with pytest.raises(ValueError, match="alternate_blocks: needs the warp-specialized 64-row"):
        planned(128, warp_specialized=False, alternate_blocks=True)
    with pytest.raises(TypeError, match="alternate_blocks: expected a bool"):
        planned(128, alternate_blocks=1)


def test_the_program_loop_refuses_copies_taller_than_its_blocks():
    # The launcher's callers (and tools/program_times.py) build the pool's descriptors; 64-row
    # boxes into the 32-key ring would write past each buffer.
    plan = planned(128, schedule="balanced")
    assert plan.alternate_blocks and plan.block_n == 32
    kv = torch.empty(4, 64, 576, dtype=torch.bfloat16)
    q = torch.empty(8, 1, 128, 576, dtype=torch.bfloat16)
    tall = ws.kv_row_descriptors(kv, 64)
    with pytest.raises(ValueError, match="descriptors: boxes of 64 rows for the plan's 32-key"):
        ws.launch_program_loop(plan, q, tall, 64, None, None, 1.0)


def alternate_plan(case, heads, qlen, page_size, dtype=torch.bfloat16, **knobs):
    batch, columns = case.page_table.shape
    knobs = {"schedule": "uniform", **knobs}
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=dtype, device="cuda",
                               alternate_blocks=True, **knobs)  # fmt: skip
    assert plan.alternate_blocks and plan.warp_specialized
    plan.workspace.partial_o.fill_(float("nan"))  # every slot the merge reads is written
    plan.workspace.partial_lse.fill_(float("nan"))
    if plan.schedule == "balanced":
        plan.workspace.piece_ranges.fill_(-(10**6))
    return plan


# 128 heads (two head blocks), 16 x 8 (two), 12 x 4 (48 rows: a padded block), 40 heads.
SHAPES = [(128, 1), (16, 8), (12, 4), (40, 1), (16, 4)]


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen", SHAPES)
@pytest.mark.parametrize("page_size", [8, 64])
@pytest.mark.parametrize("num_splits", [None, 1, 3, 16])
def test_matches_the_reference(heads, qlen, page_size, num_splits):
    # The lengths give splits of 0, 1, 2 and many blocks, odd and even counts (the last block
    # the first warpgroup's or the second's) and tails inside a block.
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    check(case, alternate_plan(case, heads, qlen, page_size, num_splits=num_splits))


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen", SHAPES)
@pytest.mark.parametrize("page_size", [8, 64])
@pytest.mark.parametrize("num_programs", [None, 1, 7, 300])
def test_the_program_loop_matches_the_reference(heads, qlen, page_size, num_programs):
    # The balanced schedule's program loop: pieces of every size, a program crossing many
    # requests (1 program), pieces of one block (300), the ring and the turns carried from
    # piece to piece.
    case = random_mla_case(lengths_for_ragged(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    plan = alternate_plan(case, heads, qlen, page_size, schedule="balanced",
                          num_programs=num_programs)  # fmt: skip
    assert plan.program_loop
    check(case, plan)


@pytest.mark.gpu
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("heads,qlen", [(128, 1), (12, 4)])
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_scores_that_climb_fall_or_jump(factor, heads, qlen, schedule):
    # The running maximum passes between the warpgroups block by block: a maximum that moves
    # at many blocks, never, or from far below zero to far above must rescale both halves of O
    # and the sum alike.
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, page_size=64,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    scale_keys_by_position(case, 64, FACTORS[factor])
    check(case, alternate_plan(case, heads, qlen, 64, schedule=schedule, num_programs=7))


@pytest.mark.gpu
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_float16_and_queries_through_registers(schedule):
    case = random_mla_case(lengths_for(1), 128, dtype=torch.float16, device="cuda")
    check(case, alternate_plan(case, 128, 1, 64, dtype=torch.float16, schedule=schedule))
    # q's rows 640 elements apart: no query descriptors, the warps store the rows (the
    # program loop then runs the default consumers on the same ring).
    wide = torch.full((*case.q.shape[:3], 640), float("nan"), dtype=case.q.dtype, device="cuda")
    wide[..., :576] = case.q
    args = (wide[..., :576], case.kv_cache, case.page_table, case.seq_lens)
    plan = alternate_plan(case, 128, 1, 64, dtype=torch.float16, schedule=schedule)
    out, lse = splitkv.mla_decode(*args, plan=plan)
    ref_out, ref_lse = splitkv.reference.mla_decode(*args)
    check_against_reference(out, lse, ref_out, ref_lse)


@pytest.mark.gpu
@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_a_captured_graph_replays_new_lengths(schedule):
    case = random_mla_case([20000, 4097, 65, 1], 128, dtype=torch.bfloat16, device="cuda")
    replays_new_lengths(case, alternate_plan(case, 128, 1, 64, schedule=schedule))


def replays_new_lengths(case, plan):
    """One call captured in a CUDA graph, replayed on new lengths (within each row's pages),
    each replay against the reference."""
    out = torch.empty_like(case.q[..., :512])
    lse = torch.empty(case.q.shape[:3], dtype=torch.float32, device="cuda")
    graph = capture_cuda_graph(lambda: splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse))
    for lengths in ([1, 4000, 65, 0], [19999, 127, 1, 1]):
        case.seq_lens.copy_(torch.tensor(lengths, dtype=torch.int32))
        graph.replay()
        ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
        check_against_reference(out, lse, ref_out, ref_lse)

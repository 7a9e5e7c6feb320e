"""The balanced merge sized by each request's partials (`merge_long_partials`,
kernels/merge_by_length.py): requests of many partials one row a program, the others several
rows a program in one small tile, on one grid whatever the lengths; against the reference."""

import random

import pytest
import torch
from test_balanced_schedule import balanced_plan, fill_partials_with_nan, run_and_check

import splitkv
from splitkv.device import DeviceSpec
from splitkv.mla import merge_programs, merge_workspace, mla_stage_one
from splitkv.testing import check_against_reference, random_mla_case

# 1,200 and 700 keys span many of 24 programs of 16-key blocks; the rest one to three.
LENGTHS = [2, 63, 0, 1200, 3, 129, 700, 5]


@pytest.mark.parametrize("long_partials,merge_rows,qlen", [(4, 2, 2), (2, 8, 2), (8, 1, 1)])
def test_long_and_short_requests(long_partials, merge_rows, qlen, dtype, device):
    case = random_mla_case(LENGTHS, 4, qlen=qlen, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(LENGTHS, 4, 24, qlen=qlen, dtype=dtype, device=device,
                         merge_long_partials=long_partials, merge_rows=merge_rows,
                         merge_block_s=4, merge_d_split=2)  # fmt: skip
    assert (plan.merge_long_partials, plan.merge_rows) == (long_partials, merge_rows)
    fill_partials_with_nan(plan)  # a slot read that stage 1 did not write poisons the output
    run_and_check(case, plan)
    first, last = plan.workspace.piece_ranges.view(-1, 2)[3].tolist()
    assert last - first + 1 > long_partials  # the 1,200-key request takes the long path


def test_as_many_long_requests_as_can_be(dtype, device):
    # 7 programs, 2 partials at most for a short request: (7 - 1) // 2 = 3 requests of 3
    # pieces each fill every long slot (3, 3 and 4 blocks of 16 keys span programs 0-2, 2-4
    # and 4-6).
    lengths = [40, 48, 64, 0]
    case = random_mla_case(lengths, 2, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 2, 7, dtype=dtype, device=device, block_n=16,
                         merge_long_partials=2, merge_rows=2)  # fmt: skip
    fill_partials_with_nan(plan)
    run_and_check(case, plan)
    ranges = plan.workspace.piece_ranges.view(-1, 2)[:3].tolist()
    assert ranges == [[0, 2], [2, 4], [4, 6]]


def test_random_batches_replayed_on_one_plan(dtype, device):
    # One plan (one grid) for batches whose long requests come and go.
    rng = random.Random(74)
    plan = balanced_plan([640] * 6, 4, 11, dtype=dtype, device=device,
                         merge_long_partials=2, merge_rows=4)  # fmt: skip
    out = torch.empty(6, 1, 4, 512, dtype=dtype, device=device)
    for step in range(3):
        lengths = [rng.choice([0, 1, 17, 100, 640]) for _ in range(6)]
        case = random_mla_case(lengths, 4, page_size=16, dtype=dtype, device=device,
                               table_columns=41, seed=step)  # fmt: skip
        got, lse = splitkv.mla_decode(*case.args, plan=plan, out=out)
        check_against_reference(got, lse, *splitkv.reference.mla_decode(*case.args))


def test_needs_the_balanced_schedule(device):
    with pytest.raises(ValueError, match="merge_long_partials"):
        splitkv.plan_decode(2, 256, 4, page_size=16, dtype=torch.float16, device=device,
                            schedule="uniform", merge_long_partials=4)  # fmt: skip
    with pytest.raises(ValueError, match="merge_long_partials"):
        balanced_plan([64, 64], 4, 3, dtype=torch.float16, device=device, merge_long_partials=3)


@pytest.mark.gpu
def test_program_times():
    # Every program of the grid, long slots and short rows, stamps its start, the end of its
    # wait for stage 1 and its end (tools/kernel_timeline.py --merge-stamps).
    lengths = [640, 3, 70, 0, 17, 200]
    case = random_mla_case(lengths, 4, page_size=16, dtype=torch.bfloat16, device="cuda")
    plan = balanced_plan(lengths, 4, 11, dtype=torch.bfloat16, device="cuda",
                         merge_long_partials=2, merge_rows=4)  # fmt: skip
    out = torch.empty(6, 1, 4, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(6, 1, 4, device="cuda")
    programs = merge_programs(plan, 6, 4) * plan.merge_d_split
    times = torch.zeros(programs, 3, dtype=torch.int64, device="cuda")
    mla_stage_one(*case.args, plan=plan, out=out, lse=lse)
    merge_workspace(plan, case.seq_lens, out, lse, max_seq_len=case.page_table.shape[1] * 16,
                    whole_pieces=plan.whole_pieces, program_times=times)  # fmt: skip
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    assert (times > 0).all() and (times[:, 0] <= times[:, 1]).all()
    assert (times[:, 1] <= times[:, 2]).all()


def test_head_blocks(device):
    # Two head blocks of stage 1 (64 heads on a 32-row tile): every block's rows fold the
    # programs of its own block's pieces.
    lengths = [700, 3, 90, 0, 17]
    case = random_mla_case(lengths, 64, page_size=16, dtype=torch.float16, device=device)
    plan = balanced_plan(lengths, 64, 9, dtype=torch.float16, device=device, block_h=32,
                         merge_long_partials=2, merge_rows=8)  # fmt: skip
    assert plan.num_head_blocks > 1
    fill_partials_with_nan(plan)
    run_and_check(case, plan)


H100 = DeviceSpec.preset("h100")
ONE_LONG = [327600, *(1 + (4095 * i) // 46 for i in range(47))]  # BENCH.md's one-long batch


def h100_plan(lengths, heads, qlen=1, **knobs):
    return splitkv.plan_decode(len(lengths), max(lengths), heads, qlen=qlen, device="meta",
                               device_spec=H100, seq_lens=lengths, **knobs)  # fmt: skip


def test_default_where_the_batch_passes_the_long_slots():
    # On by default for MLA's balanced merge where the batch has more requests than the
    # grid's long slots ((132 - 1) // 16 = 8 on the H100), 4 rows a program (2 where only 2
    # divide heads x qlen); docs/perf.md run240.
    plan = h100_plan(ONE_LONG, 12, qlen=4)
    assert (plan.schedule, plan.merge_long_partials, plan.merge_rows) == ("balanced", 16, 4)
    two_rows = h100_plan(ONE_LONG, 2)
    assert (two_rows.merge_long_partials, two_rows.merge_rows) == (16, 2)
    # Off: a batch within the long slots, one row of heads x qlen, a pinned merge knob or 0, a
    # long batch of equal lengths (equal shares), GQA, the interpreter.
    ragged = [1, 63, 64, 65, 4096, 4097, 65536, 327600]
    assert h100_plan(ragged, 12, qlen=4).merge_long_partials == 0
    assert h100_plan(ONE_LONG, 1).merge_long_partials == 0
    pinned = h100_plan(ONE_LONG, 12, qlen=4, merge_rows=2)
    assert (pinned.merge_long_partials, pinned.merge_rows) == (0, 2)
    assert h100_plan(ONE_LONG, 12, qlen=4, merge_num_warps=2).merge_long_partials == 0
    assert h100_plan(ONE_LONG, 12, qlen=4, merge_long_partials=0).merge_long_partials == 0
    equal = h100_plan([327600] * 48, 12)
    assert equal.schedule == "balanced" and equal.merge_long_partials == 0
    gqa = h100_plan(ONE_LONG, 32, kind="gqa", num_kv_heads=8, head_dim=128, schedule="balanced")
    assert gqa.merge_long_partials == 0
    cpu = splitkv.plan_decode(48, 327600, 12, qlen=4, dtype=torch.float16, device="cpu",
                              seq_lens=ONE_LONG, schedule="balanced")  # fmt: skip
    assert cpu.merge_long_partials == 0

"""The balanced schedule (issue 5): the batch's key blocks cut evenly over a fixed number of
programs, pieces spanning request boundaries, merged per request; against the reference."""

import pytest
import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case

RAGGED = [1, 63, 64, 65, 400, 0, 2, 129]


def balanced_plan(lengths, heads, num_programs, *, qlen=1, page_size=16, dtype, device, **knobs):
    columns = max(-(-n // page_size) for n in lengths) + 1
    return splitkv.plan_decode(
        len(lengths),
        columns * page_size,
        heads,
        qlen=qlen,
        page_size=page_size,
        dtype=dtype,
        device=device,
        schedule="balanced",
        num_programs=num_programs,
        **knobs,
    )


def run_and_check(case, plan):
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    return out, lse


def fill_partials_with_nan(plan):
    """Stale NaN in every partial slot: a slot the merge reads that stage 1 did not write
    poisons the output."""
    plan.workspace.partial_o.fill_(float("nan"))
    plan.workspace.partial_lse.fill_(float("nan"))


@pytest.mark.parametrize("program_loop", [False, True])
@pytest.mark.parametrize("num_programs", [1, 2, 5, 13, 64])
def test_ragged_batch_any_program_count(num_programs, program_loop, dtype, device):
    # 1 program: everything in one piece chain; 64: more programs than key blocks (idle ones).
    # program_loop: one program per schedule program walks its pieces (same slots).
    case = random_mla_case(RAGGED, 4, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(RAGGED, 4, num_programs, dtype=dtype, device=device,
                         program_loop=program_loop)  # fmt: skip
    # Stale NaN in every slot: the merge may only read slots this call wrote (idle programs
    # mark theirs with lse -inf).
    fill_partials_with_nan(plan)
    # Stale program ranges too: stage 1 rewrites those of every request with keys, and the
    # merge ignores them for the empty one (length 0 in RAGGED).
    plan.workspace.piece_ranges.copy_(torch.tensor([[10**6, -(10**6)]]).expand(len(RAGGED), 2))
    run_and_check(case, plan)


@pytest.mark.parametrize("piece_cost", [1, 3])
@pytest.mark.parametrize("num_programs", [1, 5, 64])
def test_program_loop_with_a_piece_cost(piece_cost, num_programs, dtype, device):
    # Each request counts piece_cost schedule units beside its blocks: programs that meet many
    # requests take fewer blocks; some programs hold only a request's first units (no piece)
    # and 64 programs leave some empty inside a request's blocks (their slots marked).
    lengths = [max(n, 2) if n else 0 for n in RAGGED]
    case = random_mla_case(lengths, 4, qlen=2, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 4, num_programs, qlen=2, dtype=dtype, device=device,
                         program_loop=True, piece_cost=piece_cost)  # fmt: skip
    assert plan.piece_cost == piece_cost
    fill_partials_with_nan(plan)
    plan.workspace.piece_ranges.fill_(-(10**6))
    run_and_check(case, plan)


def test_piece_cost_needs_the_program_loop(device):
    knobs = {"schedule": "balanced", "num_programs": 5, "device": device}
    assert splitkv.plan_decode(8, 512, 4, program_loop=False, **knobs).piece_cost == 0  # slots
    # Either program loop's default (the Triton one here, or on the CPU): 2, as measured.
    assert splitkv.plan_decode(8, 512, 4, program_loop=True, **knobs).piece_cost == 2
    assert splitkv.plan_decode(8, 512, 4, program_loop=True, piece_cost=0, **knobs).piece_cost == 0
    with pytest.raises(ValueError, match="piece_cost: needs the balanced program loop"):
        splitkv.plan_decode(8, 512, 4, program_loop=False, piece_cost=2, **knobs)
    with pytest.raises(ValueError, match=r"piece_cost: expected an int in \[0, 65536\]"):
        splitkv.plan_decode(8, 512, 4, program_loop=True, piece_cost=-1, **knobs)
    with pytest.raises(TypeError, match="piece_cost: expected an int"):
        splitkv.plan_decode(8, 512, 4, program_loop=True, piece_cost=True, **knobs)


@pytest.mark.parametrize("program_loop", [False, True])
def test_stage_one_records_each_requests_program_range(program_loop, dtype, device):
    num_programs = 5
    case = random_mla_case(RAGGED, 2, page_size=16, dtype=dtype, device=device)
    # Shares in plain key blocks (piece cost 0), as the ownership below counts them.
    loop_knobs = {"program_loop": program_loop, **({"piece_cost": 0} if program_loop else {})}
    plan = balanced_plan(RAGGED, 2, num_programs, dtype=dtype, device=device, block_n=16,
                         **loop_knobs)  # fmt: skip
    plan.workspace.piece_ranges.fill_(-1)
    splitkv.mla_decode(*case.args, plan=plan)
    blocks = [-(-n // 16) for n in RAGGED]
    total = sum(blocks)
    ends = torch.tensor(blocks).cumsum(0).tolist()
    for request, (count, end) in enumerate(zip(blocks, ends, strict=True)):
        got = plan.workspace.piece_ranges[request].tolist()
        if count:  # program p owns blocks [p * total // P, (p + 1) * total // P)
            owner = [p for p in range(num_programs) for _ in range(
                (p + 1) * total // num_programs - p * total // num_programs)]  # fmt: skip
            assert got == [owner[end - count], owner[end - 1]], request
        else:
            assert got == [-1, -1], request  # no pieces: nothing written


@pytest.mark.parametrize("program_loop", [False, True])
@pytest.mark.parametrize("qlen", [2, 4])
def test_mtp_rows(qlen, program_loop, dtype, device):
    lengths = [max(n, qlen) if n else 0 for n in RAGGED]
    case = random_mla_case(lengths, 3, qlen=qlen, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 3, 6, qlen=qlen, dtype=dtype, device=device,
                         program_loop=program_loop)  # fmt: skip
    run_and_check(case, plan)


@pytest.mark.parametrize("page_size,block_n", [(1, 16), (4, 32), (64, 16), (256, 32)])
def test_page_sizes(page_size, block_n, dtype, device):
    lengths = [3, 300, 17, 0, 64]
    case = random_mla_case(lengths, 2, page_size=page_size, dtype=dtype, device=device)
    plan = balanced_plan(
        lengths, 2, 7, page_size=page_size, dtype=dtype, device=device, block_n=block_n
    )
    run_and_check(case, plan)


@pytest.mark.parametrize("heads", [20, 96])
def test_several_head_blocks(heads, dtype, device):
    lengths = [70, 5, 33]
    case = random_mla_case(lengths, heads, page_size=16, dtype=dtype, device=device)
    run_and_check(case, balanced_plan(lengths, heads, 4, dtype=dtype, device=device))


def test_prefetch_and_merge_tilings(dtype, device):
    case = random_mla_case(RAGGED, 4, page_size=16, dtype=dtype, device=device)
    for knobs in (
        {"page_prefetch": True, "num_stages": 3},
        {"merge_block_s": 1, "merge_d_split": 1},
        {"merge_d_split": 4},
    ):
        run_and_check(case, balanced_plan(RAGGED, 4, 5, dtype=dtype, device=device, **knobs))


@pytest.mark.parametrize("merge_rows,merge_d_split,num_programs", [(2, 4, 3), (8, 2, 13)])
def test_mla_merge_several_rows_a_program(merge_rows, merge_d_split, num_programs, dtype, device):
    # MLA's default merge folds one row a program; `merge_rows` (GQA's default past a wave)
    # is a knob for MLA too (kernels/merge_rows.py; timed on MLA in docs/perf.md session 72,
    # run236). Rows of 1-2 partials beside rows of many, partial tiles of 8 (the long rows in
    # several steps), stale NaN in every slot.
    lengths = [max(n, 2) if n else 0 for n in RAGGED]
    case = random_mla_case(lengths, 4, qlen=2, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 4, num_programs, qlen=2, dtype=dtype, device=device,
                         merge_rows=merge_rows, merge_d_split=merge_d_split,
                         merge_block_s=8)  # fmt: skip
    assert (plan.merge_rows, plan.merge_d_split) == (merge_rows, merge_d_split)
    fill_partials_with_nan(plan)
    run_and_check(case, plan)


def test_mla_merge_in_tiles_of_16_partials(dtype, device):
    # One row a program folding 16 partials a step (the default 64 takes 168 registers a
    # one-warp program on sm_90, 16 takes 63: docs/perf.md session 73, run238): the 1,200-key
    # request's rows fold 19 partials in two steps, the short rows theirs in the small tile,
    # stale NaN in every slot.
    lengths = [1, 63, 0, 1200, 2, 129]
    case = random_mla_case(lengths, 4, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 4, 24, dtype=dtype, device=device, merge_block_s=16)
    assert (plan.merge_rows, plan.merge_block_s) == (1, 16)
    fill_partials_with_nan(plan)
    run_and_check(case, plan)


def test_matches_the_uniform_schedule(dtype, device):
    case = random_mla_case(RAGGED, 4, page_size=16, dtype=dtype, device=device)
    balanced = run_and_check(case, balanced_plan(RAGGED, 4, 9, dtype=dtype, device=device))
    uniform = splitkv.mla_decode(*case.args)
    check_against_reference(*balanced, *uniform)


def test_replays_with_new_lengths(dtype, device):
    # The schedule is recomputed on the device from seq_lens at every call: one plan (one
    # grid) serves batches of very different shapes.
    plan = balanced_plan([512] * 4, 4, 6, dtype=dtype, device=device)
    out = torch.empty(4, 1, 4, 512, dtype=dtype, device=device)
    for step, lengths in enumerate([[512, 1, 1, 1], [0, 0, 0, 7], [130, 131, 129, 500]]):
        case = random_mla_case(
            lengths, 4, page_size=16, dtype=dtype, device=device, table_columns=33, seed=step
        )
        got, lse = splitkv.mla_decode(*case.args, plan=plan, out=out)
        check_against_reference(got, lse, *splitkv.reference.mla_decode(*case.args))


def test_fewer_requests_than_the_plan(dtype, device):
    # The grid and the slot layout follow the call's batch (num_programs + batch slots per row),
    # so a plan for 8 requests serves 3 with stale NaN in the unused part of the workspace.
    plan = balanced_plan(RAGGED, 4, 7, dtype=dtype, device=device)
    fill_partials_with_nan(plan)
    case = random_mla_case([300, 0, 17], 4, page_size=16, dtype=dtype, device=device)
    run_and_check(case, plan)


def test_corrupt_lengths_stay_in_bounds(dtype, device):
    case = random_mla_case([40, 40, 40], 2, page_size=16, dtype=dtype, device=device)
    lens = torch.tensor([40, 1 << 30, -7], dtype=torch.int32, device=device)
    plan = balanced_plan([40, 40, 40], 2, 4, dtype=dtype, device=device)
    _, lse = splitkv.mla_decode(case.q, case.kv_cache, case.page_table, lens, plan=plan)
    assert torch.isneginf(lse[2]).all()


@pytest.mark.parametrize("window_left", [-1, 0, 50])
@pytest.mark.parametrize("num_programs,merge_rows", [(1, 1), (3, 4), (40, 8)])
def test_gqa_balanced(window_left, num_programs, merge_rows, dtype, device):
    from splitkv.testing import random_gqa_case

    lengths = [max(n, 2) if n else 0 for n in RAGGED]
    case = random_gqa_case(
        lengths, 8, 2, 64, qlen=2, page_size=16, dtype=dtype, device=device, sinks=True
    )
    plan = splitkv.plan_decode(
        len(lengths),
        448,
        8,
        qlen=2,
        page_size=16,
        dtype=dtype,
        device=device,
        kind="gqa",
        num_kv_heads=2,
        head_dim=64,
        schedule="balanced",
        num_programs=num_programs,
        merge_rows=merge_rows,  # a merge program folds that many of a request's 16 rows
    )
    fill_partials_with_nan(plan)
    features = {"window_left": window_left, "logit_cap": 20.0, "sinks": case.sinks}
    out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True, **features)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args, **features))


@pytest.mark.parametrize("qlen", [4, 8])
@pytest.mark.parametrize("page_size", [1, 16])
def test_gqa_balanced_wide_tiles_prefetch_three_stages(qlen, page_size, dtype, device):
    # The balanced GQA default on the GPU (docs/perf.md session 28): page ids a block ahead and
    # 3 stages on tiles of 32 rows (group 8 x qlen 4 / 8), blocks over several pages.
    from splitkv.testing import random_gqa_case

    lengths = [max(n, qlen) if n else 0 for n in RAGGED]
    case = random_gqa_case(lengths, 16, 2, 32, qlen=qlen, page_size=page_size, dtype=dtype,
                           device=device, sinks=True)  # fmt: skip
    program_counts = (3, 11)
    if device.type == "cpu":
        # One count a case in the interpreter (12-27 s a count, the suite's slowest test): the
        # two dtypes take opposite counts, so each page size still meets both. At qlen 8 (two
        # head blocks on the CPU, the slowest: 29-35 s a case) one case: float16 on pages of 1
        # key with 3 programs (sessions 62 and 64's trims of the CPU suite; the GPU runs all).
        half = dtype == torch.float16
        if qlen == 8:
            if not half or page_size != 1:
                pytest.skip("the interpreter runs qlen 8 once: float16, pages of 1 key")
            program_counts = (3,)
        else:
            program_counts = (program_counts[half == (page_size == 1)],)
    for num_programs in program_counts:
        plan = splitkv.plan_decode(len(lengths), 448, 16, qlen=qlen, page_size=page_size,
                                   dtype=dtype, device=device, kind="gqa", num_kv_heads=2,
                                   head_dim=32, schedule="balanced", num_programs=num_programs,
                                   block_n=32, num_stages=3, page_prefetch=True)  # fmt: skip
        # A wide tile: 32 rows, or at qlen 8 one head block of 64 on the GPU (two of 32 on
        # the CPU, whose widest tile is 32 rows).
        assert plan.block_h == 32 or (qlen == 8 and plan.block_h == 64 and device.type != "cpu")
        features = {"window_left": 90, "sinks": case.sinks}
        out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True, **features)
        check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args, **features))


@pytest.mark.parametrize("program_loop", [False, True])
@pytest.mark.parametrize("num_programs", [1, 5, 48])
@pytest.mark.parametrize("qlen", [1, 2])
def test_every_row_written_over_stale_buffers(num_programs, qlen, program_loop, dtype, device):
    # Stale NaN in the workspace and the outputs: every row must be written, whatever the
    # grid (one program, fewer than the requests, more than the key blocks: 27 of 32 keys,
    # 41 units with the program loop's piece cost) and launch.
    lengths = [max(n, qlen) if n else 0 for n in RAGGED]
    case = random_mla_case(lengths, 4, qlen=qlen, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(lengths, 4, num_programs, qlen=qlen, dtype=dtype, device=device,
                         program_loop=program_loop)  # fmt: skip
    fill_partials_with_nan(plan)
    out = torch.full((len(lengths), qlen, 4, 512), float("nan"), dtype=dtype, device=device)
    lse = torch.full((len(lengths), qlen, 4), float("nan"), device=device)
    splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    no_lse, _ = splitkv.mla_decode(*case.args, plan=plan, return_lse=False)
    assert torch.equal(no_lse, out)


def test_merge_leaves_one_piece_requests_to_stage_1(dtype, device):
    # whole_pieces (the Gluon program loop writes a request one piece holds straight to out and
    # lse): the merge's programs for those rows return before reading a partial, and every
    # other row merges as before. Stage 1 here is the Triton loop, which writes partials for
    # all: the one-piece rows must keep what `out` held, the rest match the reference.
    from splitkv.mla import merge_workspace, mla_stage_one

    case = random_mla_case(RAGGED, 4, page_size=16, dtype=dtype, device=device)
    plan = balanced_plan(RAGGED, 4, 5, dtype=dtype, device=device, program_loop=True,
                         warp_specialized=False)  # fmt: skip
    q, kv, table, lens = case.args
    out = torch.full((len(RAGGED), 1, 4, 512), 7.0, dtype=dtype, device=device)
    lse = torch.full((len(RAGGED), 1, 4), 7.0, device=device)
    mla_stage_one(q, kv, table, lens, plan=plan, out=out, lse=lse)
    merge_workspace(plan, lens, out, lse, max_seq_len=table.shape[1] * 16, whole_pieces=True)
    ranges = plan.workspace.piece_ranges.cpu()
    one_piece = [b for b, n in enumerate(RAGGED) if n > 0 and ranges[b, 0] == ranges[b, 1]]
    merged = [b for b in range(len(RAGGED)) if b not in one_piece]
    assert one_piece and merged  # the batch has both kinds at 5 programs
    assert (out[one_piece] == 7.0).all() and (lse[one_piece] == 7.0).all()
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference(out[merged], lse[merged], ref_out[merged], ref_lse[merged])


@pytest.mark.triton_3_6
def test_whole_pieces_knob(device):
    h200 = {"device": "meta", "device_spec": splitkv.DeviceSpec.preset("h200")}
    loop = splitkv.plan_decode(8, 68096, 12, **h200)  # the 16-row keys-as-rows program loop
    assert loop.program_loop and loop.keys_as_rows and loop.whole_pieces  # on at qlen 1
    mtp = splitkv.plan_decode(8, 68096, 12, qlen=2, schedule="balanced", **h200)
    assert mtp.program_loop and mtp.keys_as_rows and not mtp.whole_pieces  # off past it
    assert splitkv.plan_decode(8, 68096, 12, qlen=2, schedule="balanced", whole_pieces=True,
                               **h200).whole_pieces  # fmt: skip
    assert not splitkv.plan_decode(8, 68096, 12, whole_pieces=False, **h200).whole_pieces
    assert not splitkv.plan_decode(8, 8192, 12, **h200).whole_pieces  # uniform splits
    wide = splitkv.plan_decode(8, 68096, 128, schedule="balanced", **h200)
    assert wide.program_loop and not wide.keys_as_rows and not wide.whole_pieces
    triton_loop = balanced_plan(RAGGED, 4, 5, dtype=torch.float16, device=device,
                                program_loop=True, warp_specialized=False)  # fmt: skip
    assert not triton_loop.whole_pieces
    with pytest.raises(ValueError, match="whole_pieces: needs the warp-specialized"):
        splitkv.plan_decode(8, 8192, 12, whole_pieces=True, **h200)
    with pytest.raises(TypeError, match="whole_pieces: expected a bool"):
        splitkv.plan_decode(8, 68096, 12, whole_pieces=1, **h200)

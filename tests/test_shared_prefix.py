"""mla_decode_shared_prefix: the cascade (prefix pass per group, suffix pass, merge) equals the
plain decode for every grouping, including requests that end inside the shared prefix."""

import dataclasses

import pytest
import torch

import splitkv
from splitkv.mla import decode_checked
from splitkv.prefix_rows import PackedInts, chunk_layout, prefix_rows
from splitkv.testing import MlaCase, capture_cuda_graph, check_against_reference, random_mla_case


def check(case, groups, **kwargs):
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, groups, validate=True, **kwargs)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args, **kwargs))


@pytest.mark.parametrize("qlen", [1, 3])
@pytest.mark.parametrize("page_size", [1, 16, 64])
def test_one_group_with_edge_members(qlen, page_size, dtype, device):
    shared = 4 * page_size if page_size > 1 else 37  # page 1: an unaligned key start
    lengths = [
        shared + 150,  # plain member
        shared + 3,
        shared + qlen - 1,  # its whole context is the prefix (plus its query tokens)
        shared - 5,  # ends inside the prefix: decoded plainly
        shared + 90,  # in no group
    ]
    case = random_mla_case(
        lengths, 4, qlen=qlen, page_size=page_size, dtype=dtype, device=device, shared_prefix=shared
    )
    check(case, [([0, 1, 2, 3], shared // page_size)])


@pytest.mark.parametrize("qlen", [1, 2])
def test_a_group_led_by_a_member_that_ends_inside_the_prefix(qlen, dtype, device):
    # Request 0 ends inside its group's 4 shared pages, so its table holds no id past its keys
    # (the test inputs put a poisoned page there); the prefix pass once read every chunk's
    # pages through the group's first member: request 1 came out wrong (found by a fuzz).
    lengths = [26, 109, 123, 40]
    case = random_mla_case(lengths, 4, qlen=qlen, page_size=16, dtype=dtype, device=device,
                           prefix_groups=[([0, 1], 64), ([2, 3], 32)])  # fmt: skip
    check(case, [([0, 1], 4), ([2, 3], 2)])
    check(case, [([0], 4), ([3, 2], 2)])  # a group no member of which takes part
    plan = splitkv.plan_shared_prefix([([0, 1], 4), ([2, 3], 2)], 4, case.page_table.shape[1],
                                      16, device)  # fmt: skip
    check(case, plan)
    # The plan's chunks now read through request 1: a call where only request 0 ... then none
    # takes part keeps a member of the group (its state masked), never another group's.
    short = dataclasses.replace(case, seq_lens=torch.tensor([26, 50, 123, 40], dtype=torch.int32,
                                                            device=device))  # fmt: skip
    check(short, plan)


@pytest.mark.parametrize("schedule", ["balanced", "uniform"])
def test_the_passes_hold_on_either_schedule(schedule, dtype, device, monkeypatch):
    # Both passes are plain decodes; the suffix pass once handed per-request key starts to a
    # launch that ignored them on the balanced schedule (the GPU planner's choice for long
    # batches): wrong results there only. Force each schedule on both passes.
    passes = []

    def decode_on(plan, q, call, page_table, seq_lens):
        plan = splitkv.plan_decode(call.batch, page_table.shape[1] * call.page_size,
                                   call.num_heads, qlen=call.qlen, page_size=call.page_size,
                                   dtype=q.dtype, device=q.device, schedule=schedule)  # fmt: skip
        passes.append(plan.schedule)
        return decode_checked(plan, q, call, page_table, seq_lens)

    monkeypatch.setattr(splitkv.prefix, "decode_checked", decode_on)
    # Request 2 ends inside the prefix, 5 has no keys at all (both states empty), 4 is in no
    # group.
    lengths = [150, 70, 30, 200, 90, 0]
    case = random_mla_case(lengths, 4, qlen=2, page_size=16, dtype=dtype, device=device,
                           prefix_groups=[([0, 1, 2, 5], 48), ([3], 32)])  # fmt: skip
    check(case, [([0, 1, 2, 5], 3), ([3], 2)])
    assert passes and set(passes) == {schedule}  # both passes, on the forced schedule


def test_no_sharing_and_empty_groups(dtype, device):
    case = random_mla_case([100, 7, 0], 4, page_size=16, dtype=dtype, device=device)
    check(case, [])
    check(case, [([0, 1], 0), ([], 3)])


def test_prefix_groups_built_by_the_test_inputs(dtype, device):
    # random_mla_case(prefix_groups=...): each group's members hold the same page ids in their
    # leading columns, no page is shared across groups, a request in no group shares nothing.
    lengths = [130, 100, 64, 90, 60, 33, 45]
    groups = [([0, 1, 2], 64), ([3, 5], 32), ([4], 16)]
    case = random_mla_case(lengths, 4, qlen=2, page_size=16, dtype=dtype, device=device,
                           prefix_groups=groups)  # fmt: skip
    table = case.page_table.cpu()
    assert torch.equal(table[0, :4], table[1, :4]) and torch.equal(table[0, :4], table[2, :4])
    assert torch.equal(table[3, :2], table[5, :2]) and not torch.equal(table[3, 2], table[5, 2])
    used = [set(table[b, : -(-n // 16)].tolist()) for b, n in enumerate(lengths)]
    assert not (used[0] & used[3]) and not (used[6] & set().union(*used[:6]))
    assert case.sharing == (((0, 1, 2), 64), ((3, 5), 32), ((4,), 16))
    check(case, [(m, tokens // 16) for m, tokens in groups])
    with pytest.raises(ValueError, match=r"^prefix_groups"):
        random_mla_case(lengths, 4, page_size=16, prefix_groups=[([0, 1], 16), ([1], 16)])


def test_two_groups_with_different_prefixes(dtype, device):
    first = random_mla_case(
        [300, 200, 150], 4, qlen=2, page_size=16, dtype=dtype, device=device, shared_prefix=128
    )
    second = random_mla_case(
        [90, 64, 40], 4, qlen=2, page_size=16, dtype=dtype, device=device, shared_prefix=32
    )
    pool = first.kv_cache.shape[0]
    columns = max(first.page_table.shape[1], second.page_table.shape[1])
    table = torch.full((6, columns), pool - 1, dtype=torch.int32, device=device)
    table[:3, : first.page_table.shape[1]] = first.page_table
    table[3:, : second.page_table.shape[1]] = second.page_table + pool
    case = MlaCase(
        q=torch.cat([first.q, second.q]),
        kv_cache=torch.cat([first.kv_cache, second.kv_cache]),
        page_table=table,
        seq_lens=torch.cat([first.seq_lens, second.seq_lens]),
        poison_page=pool - 1,
    )
    check(case, [([0, 1, 2], 8), ([3, 4, 5], 2)], scale=0.05)


def test_many_rows_are_chunked(dtype, device, monkeypatch):
    # 4 members x qlen 2 x 20 heads = 160 stacked rows: more than one chunk of 128 takes. On
    # the CPU, chunks of 32 and 5 heads (40 rows) test the same cut: 128-row chunks took the
    # interpreter ~30 s a dtype.
    heads = 20
    if device.type == "cpu":
        monkeypatch.setattr(splitkv.prefix, "MAX_HEADS", 32)
        heads = 5
    case = random_mla_case(
        [100, 90, 80, 70], heads, qlen=2, page_size=16, dtype=dtype, device=device,
        shared_prefix=48,
    )  # fmt: skip
    check(case, [([0, 1, 2, 3], 3)])


def test_groups_of_different_sizes_share_one_prefix_launch(dtype, device, monkeypatch):
    # One decode call takes every group's stacked rows. With chunks of at most 32 rows (128 on
    # the GPU runs, as shipped, with 20 heads): 1, 3 and 7 members x qlen 2 x 4 heads are 8, 24
    # and 56 rows, so chunks of 8, 24, 32 and 24 rows padded to 32, with prefixes of 1, 2 and 4
    # pages; request 11 is in no group, request 10 ends in its prefix. (The interpreter's time
    # grows with the padded rows: 20 heads took a minute a dtype on the CPU.)
    heads = 20
    if device.type == "cpu":
        monkeypatch.setattr(splitkv.prefix, "MAX_HEADS", 32)
        heads = 4
    lengths = [50, 90, 70, 40, 200, 180, 160, 140, 120, 100, 60, 75]
    groups = [([0], 16), ([1, 2, 3], 32), ([4, 5, 6, 7, 8, 9, 10], 64)]
    case = random_mla_case(lengths, heads, qlen=2, page_size=16, dtype=dtype, device=device,
                           prefix_groups=groups)  # fmt: skip
    check(case, [(m, tokens // 16) for m, tokens in groups])


@pytest.mark.parametrize(
    "groups,message",
    [
        ("0:3", r"^prefix_groups: expected a list"),
        ([([0, 9], 2)], r"^prefix_groups: expected an int in \[0, 2\]"),
        ([([0, 1], 2), ([1], 1)], r"^prefix_groups: expected each request in one group"),
        ([([0, 1], 99)], r"^prefix_groups: expected an int in"),
        ([([0, 1, 2], 2, 5)], r"^prefix_groups: expected \(request indices, shared pages\)"),
        ([(0, 1)], r"^prefix_groups: expected a group's request indices as a list"),
    ],
)
def test_bad_groups_are_named(groups, message, device):
    case = random_mla_case([40, 40, 40], 2, page_size=16, dtype=torch.float16, device=device)
    with pytest.raises((TypeError, ValueError), match=message):
        splitkv.mla_decode_shared_prefix(*case.args, groups)


def test_validate_catches_pages_that_are_not_shared(device):
    case = random_mla_case([40, 40], 2, page_size=16, dtype=torch.float16, device=device)
    with pytest.raises(ValueError, match=r"^prefix_groups: expected requests \[0, 1\] to hold"):
        splitkv.mla_decode_shared_prefix(*case.args, [([0, 1], 2)], validate=True)


def test_a_plan_serves_new_lengths(dtype, device):
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 3)], 3, 20, 16, device)
    for step, extra in enumerate([(100, 5, 40), (1, 200, 0), (250, 250, 250)]):
        lengths = [48 + n for n in extra]
        case = random_mla_case(
            lengths,
            4,
            page_size=16,
            dtype=dtype,
            device=device,
            shared_prefix=48,
            table_columns=20,
            seed=step,
        )
        out, lse = splitkv.mla_decode_shared_prefix(*case.args, prefix)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        # Both passes planned on the first call and kept: no host planning after it.
        (passes,) = prefix.passes.values()
        if step == 0:
            first = passes
        assert passes is first and passes[1] is not None


def test_expected_lengths_steer_the_suffix_pass(dtype, device):
    # Request 2 ends inside the prefix (its whole context in the suffix pass), request 3 is in
    # no group; the others' suffixes steer the plan (tests/test_shared_prefix_gqa.py has the
    # GQA form and the bad arguments).
    lengths = [48 + 100, 48 + 5, 40, 70]
    case = random_mla_case(lengths, 4, page_size=16, dtype=dtype, device=device,
                           prefix_groups=[([0, 1, 2], 48)])  # fmt: skip
    columns = case.page_table.shape[1]
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 3)], 4, columns, 16, device,
                                        seq_lens=lengths)  # fmt: skip
    check(case, prefix)
    ((suffix, _),) = prefix.passes.values()
    want = splitkv.plan_decode(4, columns * 16, 4, page_size=16, dtype=dtype, device=device,
                               seq_lens=[100, 5, 40, 70])  # fmt: skip
    assert (suffix.schedule, suffix.num_splits, suffix.num_programs) == (
        want.schedule, want.num_splits, want.num_programs)  # fmt: skip


def test_prefix_rows_stack_members_and_hand_back():
    # Group 0: requests 3 and 1 (3 rows each) cut into chunks of 4 rows; group 1 has no pages
    # (no pass); request 0 and 2 are in no pass (chunk row 0, masked by the caller).
    rows = prefix_rows((((3, 1), 2), ((2,), 0)), 4, 3, 16, 4, "cpu")
    assert (rows.num_chunks, rows.width, rows.tokens) == (2, 4, 32)
    assert rows.gather.tolist() == [9, 10, 11, 3, 4, 5, 0, 0]  # the chunk rows' query rows
    assert rows.scatter.tolist() == [0, 0, 0, 3, 4, 5, 0, 0, 0, 0, 1, 2]
    assert rows.first.tolist() == [3, 3] and rows.lens.tolist() == [32, 32]
    assert rows.prefix_len.tolist() == [0, 32, 0, 32]  # the pageless group shares 0 keys
    assert prefix_rows((((0, 1), 0),), 2, 3, 16, 4, "cpu") is None


def test_a_plans_device_arrays_come_in_one_copy(monkeypatch):
    # Each host-to-device copy waits for the stream's queued work: a plan's rows and prefix
    # lengths come as views of one buffer, and planning copies nothing else.
    copies = []
    real_to = torch.Tensor.to
    monkeypatch.setattr(
        torch.Tensor, "to", lambda t, *a, **k: copies.append(1) or real_to(t, *a, **k)
    )
    plan = splitkv.plan_shared_prefix([([0, 2], 2), ([1, 3], 1)], 4, 4, 16, "cpu", num_heads=4)
    rows = plan.rows[1, 4]
    fields = (rows.gather, rows.scatter, rows.first, rows.lens, rows.chunk_lo, rows.chunk_hi,
              rows.prefix_len)  # fmt: skip
    assert len({f.untyped_storage().data_ptr() for f in fields}) == 1 and len(copies) == 1


def test_prefix_rows_remembered_layout_gives_each_plan_its_own_tensors():
    # The layout is remembered by its host ints; each call gets tensors of its own, since a
    # call's suffix_rows writes `first`.
    groups = (((3, 1), 2), ((0, 2), 1))
    a, b = (prefix_rows(groups, 4, 3, 16, 4, "cpu") for _ in range(2))
    a.first.fill_(7)
    assert b.first.tolist() == [3, 3, 0, 0]
    assert a.gather.data_ptr() != b.gather.data_ptr()


def test_packed_ints_come_back_with_their_values_and_dtypes():
    # Odd lengths of int32 and int64 arrays, an empty one among them, each 8-byte aligned.
    arrays = [([5, -1, 2**40], torch.int64), ([1, 2, 3], torch.int32), ([], torch.int64),
              ([2**31 - 1], torch.int32), ([9, 8], torch.int64)]  # fmt: skip
    packed = PackedInts.of(arrays)
    for (values, dtype), got in zip(arrays, packed.on("cpu"), strict=True):
        assert got.dtype == dtype and got.tolist() == values
        assert got.data_ptr() % 8 == 0 or got.numel() == 0
    assert all(start % 8 == 0 for start, _, _ in packed.spans)
    assert packed.on("meta")[0].shape == (3,)


def test_chunks_narrow_to_whole_tiles_where_that_computes_less():
    # 8 members of 24 rows (12 heads x qlen 2): chunks of 128 rows are 128 + 64, both padded
    # to 128 (256 tile rows); chunks of one 64-row tile are 3 x 64 (192). 8 of 120 rows: 960
    # rows in 15 chunks of 64 against 8 of 128 (1,024), too little to lose the two-block
    # tile for; 8 of 12: one chunk of 96 either way. The H200's tiles on a CPU plan.
    group = [(list(range(8)), 10)]
    plan = splitkv.plan_shared_prefix(group, 8, 10, 16, "cpu",
                                      device_spec=splitkv.DeviceSpec.preset("h200"))  # fmt: skip
    widths = {rows: [n for _, _, n in chunk_layout(plan.groups, rows, plan._chunk_rows(rows))]
              for rows in (24, 120, 12)}  # fmt: skip
    assert widths == {24: [64, 64, 64], 120: [128] * 7 + [64], 12: [96]}
    assert [n for _, _, n in chunk_layout(plan.groups, 24, 128)] == [128, 64]
    stacked = plan.rows_for(2, 12)
    assert (stacked.num_chunks, stacked.width) == (3, 64)


def test_plan_for_a_shape_and_bad_shapes_named(device):
    plan = splitkv.plan_shared_prefix([([0, 1], 2)], 3, 4, 16, device, num_heads=4, qlen=2)
    assert set(plan.rows) == {(2, 4)}
    with pytest.raises(ValueError, match=r"^num_heads: expected an int in \[1, 128\]"):
        splitkv.plan_shared_prefix([([0, 1], 2)], 3, 4, 16, device, num_heads=0)
    with pytest.raises(ValueError, match=r"^qlen: expected an int in \[1, 8\]"):
        splitkv.plan_shared_prefix([([0, 1], 2)], 3, 4, 16, device, num_heads=4, qlen=9)


@pytest.mark.parametrize("tiles,members,cascades", [(1, 3, False), (0.75, 8, True)])
def test_compute_bound_calls_take_the_cascade_only_where_it_pads_less(
    tiles, members, cascades, dtype, device, monkeypatch
):
    # Past max_rows (0 here) both paths compute the same rows, on tiles of block_m rows, and
    # the prefix pass's chunks hold at most 2 tiles here (the GPU's 128 rows). 3 members of a
    # whole tile each: 3 tiles plainly, 4 in chunks of 2 and 1 (padded to 2), so no cascade (a
    # plain decode, no prefix pass planned). 8 members of 3/4 of a tile: the plain path pads
    # each to a whole one (8 tiles), their stacked rows fill 3 chunks of 2 tiles, so the
    # cascade runs.
    prefix = splitkv.plan_shared_prefix([(list(range(members)), 2)], 9, 6, 16, device,
                                        max_rows=0)  # fmt: skip
    tile = prefix.spec.tunables.block_m  # 32 on the CPU, 64 on the H200
    monkeypatch.setattr(splitkv.prefix, "MAX_HEADS", 2 * tile)
    heads = int(tiles * tile) // 2
    case = random_mla_case([70, 60, 50, 40, 45, 55, 65, 75, 30], heads, qlen=2, page_size=16,
                           dtype=dtype, device=device, shared_prefix=32,
                           table_columns=6)  # fmt: skip
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, prefix, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    assert (prefix.rows_for(2, heads) is not None) is cascades
    ((_, prefix_plan),) = prefix.passes.values()
    assert (prefix_plan is not None) is cascades


def test_the_h200_rule_matches_its_measured_crossover():
    # docs/perf.md v0.2.22: 8 members sharing a prefix, by query rows a request: the cascade
    # measured faster at 12-96 and 160 rows, slower at 120 and 128 (both paths padding the
    # 64-row tiles alike there). The H200's spec for a CPU plan: only the host rule runs.
    h200 = splitkv.DeviceSpec.preset("h200")
    plan = splitkv.plan_shared_prefix([(list(range(8)), 4824)], 8, 5200, 64, "cpu",
                                      device_spec=h200)  # fmt: skip
    faster = {rows: plan.rows_for(8 if rows == 160 else 1, rows // (8 if rows == 160 else 1))
              is not None for rows in (12, 16, 24, 32, 48, 64, 96, 120, 128, 160)}  # fmt: skip
    assert [rows for rows, cascade in faster.items() if not cascade] == [120, 128]


def test_under_capture_only_a_cascade_needs_its_rows_built(monkeypatch):
    # The plain path's choice is made from host integers, so a capture may meet a shape the
    # plan has not served yet when that shape decodes plainly; the cascade's index tensors
    # would be a host copy there, so it is a ValueError before any launch.
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)

    def on_gpu(max_rows):
        plan = splitkv.plan_shared_prefix([([0, 1, 2], 2)], 3, 6, 16, "cpu", max_rows=max_rows)
        return dataclasses.replace(plan, device=torch.device("cuda"), rows={})

    tile = splitkv.DeviceSpec.from_torch("cpu").tunables.block_m
    assert on_gpu(0).rows_for(1, tile) is None  # 3 whole tiles either way
    with pytest.raises(ValueError, match=r"^prefix_groups: a plan not yet used for qlen 1 x"):
        on_gpu(tile).rows_for(1, tile)


def test_memory_bound_calls_always_take_the_cascade(device):
    # Up to max_rows (None: the device's crossover, none on the CPU, 64 on the H200) the
    # cascade runs even where the plain path pads nothing.
    assert splitkv.DeviceSpec.preset("h200").tunables.prefix_max_rows == 64
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 2)], 3, 6, 16, device)
    tile = prefix.spec.tunables.block_m
    assert prefix.rows_for(1, tile) is not None
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 2)], 3, 6, 16, device, max_rows=tile)
    assert prefix.rows_for(1, tile) is not None and prefix.rows_for(2, tile) is None
    with pytest.raises(ValueError, match=r"^max_rows: expected an int in \[0, 1024\]"):
        splitkv.plan_shared_prefix([([0, 1], 2)], 3, 4, 16, device, max_rows=-1)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_cascade_captured_once_replayed_with_new_lengths():
    heads, columns = 12, 12
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 4), ([4], 2)], 5, columns, 16, "cuda",
                                        num_heads=heads)  # fmt: skip
    cases = [
        random_mla_case(
            [64 + a, 64 + b, 60, 100 + a, 32 + b],
            heads,
            page_size=16,
            dtype=torch.bfloat16,
            device="cuda",
            table_columns=columns,
            seed=s,
            prefix_groups=[([0, 1, 2], 64), ([4], 32)],
        )
        for s, (a, b) in enumerate([(1, 70), (90, 3), (0, 0)])
    ]
    pool = max(case.kv_cache.shape[0] for case in cases)
    kv = torch.full((pool, 16, 576), float("nan"), dtype=torch.bfloat16, device="cuda")
    q, table, lens = (t.clone() for t in (cases[0].q, cases[0].page_table, cases[0].seq_lens))
    result = {}

    def step():
        result["out"] = splitkv.mla_decode_shared_prefix(q, kv, table, lens, prefix)

    graph = capture_cuda_graph(step)
    for case in cases:
        kv[: case.kv_cache.shape[0]].copy_(case.kv_cache)
        for static, new in ((q, case.q), (table, case.page_table), (lens, case.seq_lens)):
            static.copy_(new)
        graph.replay()
        torch.cuda.synchronize()
        check_against_reference(*result["out"], *splitkv.reference.mla_decode(q, kv, table, lens))
    # A plan with no row indices for the call's shape says so under capture.
    unbuilt = splitkv.plan_shared_prefix([([0, 1, 2], 4)], 5, columns, 16, "cuda")
    graph = torch.cuda.CUDAGraph()
    message = r"^prefix_groups: a plan not yet used"
    with pytest.raises(ValueError, match=message), torch.cuda.graph(graph):
        splitkv.mla_decode_shared_prefix(q, kv, table, lens, unbuilt)

"""gqa_decode_shared_prefix: the cascade on NHD caches (each kv head's rows of a group's
members stacked over the shared pages, the suffix pass, the merge) equals the plain decode for
every grouping, with sinks, a logit cap and qlen > 1; windows and over-wide chunks decode
plainly."""

import dataclasses
import functools

import pytest
import torch

import splitkv
from splitkv.plan import MAX_GQA_HEADS
from splitkv.prefix_gqa import chunk_rows_per_kv_head, gqa_rows_for, stacked_schedule
from splitkv.prefix_rows import prefix_rows
from splitkv.testing import capture_cuda_graph, check_against_reference, random_gqa_case


def check(case, groups, **kwargs):
    out, lse = splitkv.gqa_decode_shared_prefix(*case.args, groups, validate=True, **kwargs)
    want = splitkv.reference.gqa_decode(*case.args, **kwargs)
    check_against_reference(out, lse, *want)


def gqa_case(lengths, q_heads=8, kv_heads=2, **kwargs):
    return random_gqa_case(lengths, q_heads, kv_heads, 64, **kwargs)


@pytest.mark.parametrize("qlen", [1, 3])
@pytest.mark.parametrize("page_size", [1, 16])
def test_one_group_with_edge_members(qlen, page_size, dtype, device):
    shared = 4 * page_size if page_size > 1 else 37
    lengths = [
        shared + 70,  # plain member
        shared + 3,
        shared + qlen - 1,  # its whole context is the prefix (plus its query tokens)
        shared - 5,  # ends inside the prefix: decoded plainly
        shared + 40,  # in no group
    ]
    case = gqa_case(lengths, qlen=qlen, page_size=page_size, dtype=dtype, device=device,
                    shared_prefix=shared)  # fmt: skip
    case_groups = [([0, 1, 2, 3], shared // page_size)]
    check(case, case_groups)


def test_sinks_count_once_and_the_cap_applies_to_both_passes(dtype, device):
    # Request 1's whole context is the prefix: its suffix holds no key, only the sink.
    case = gqa_case([90, 48, 70, 0], sinks=True, page_size=16, dtype=dtype, device=device,
                    prefix_groups=[([0, 1, 2, 3], 48)])  # fmt: skip
    check(case, [([0, 1, 2, 3], 3)], sinks=case.sinks, logit_cap=5.0)


@pytest.mark.parametrize("page_size,shared", [(16, 64), (1, 24)])
def test_a_group_led_by_a_member_that_ends_inside_the_prefix(page_size, shared, dtype, device):
    # The group's first member ends inside the prefix and holds no page id past its keys;
    # the prefix pass reads the shared pages through a member taking part (found by a fuzz:
    # request 1 wrong when read through request 0's row).
    lengths = [shared - 5, shared + 45, shared + 59, shared]
    case = gqa_case(lengths, q_heads=4, kv_heads=4, qlen=2, page_size=page_size, sinks=True,
                    dtype=dtype, device=device, prefix_groups=[([0, 1, 3], shared)])  # fmt: skip
    check(case, [([0, 1, 3], shared // page_size)], sinks=case.sinks)
    check(case, [([0, 3], shared // page_size)], sinks=case.sinks)  # no member takes part


def test_two_groups_and_requests_outside_them(dtype, device):
    lengths = [130, 100, 64, 90, 60, 33, 45]
    groups = [([0, 1, 2], 64), ([3, 5], 32)]  # request 4 and 6 share nothing
    case = gqa_case(lengths, qlen=2, page_size=16, dtype=dtype, device=device,
                    prefix_groups=groups)  # fmt: skip
    assert case.sharing == (((0, 1, 2), 64), ((3, 5), 32))
    check(case, [(m, tokens // 16) for m, tokens in groups])
    check(case, [])  # no sharing: one plain decode
    check(case, [([0, 1], 0), ([], 3)])


def test_chunks_of_different_lengths_take_the_balanced_schedule(dtype, device):
    # Planned as uniform splits of the longest chunk, the shorter chunks' programs idle: on
    # the H200 gpt-oss's 6-group mix took 380 us so, 254 balanced (docs/perf.md, session 31).
    case = gqa_case([130, 100, 64, 90, 60], page_size=16, dtype=dtype, device=device,
                    prefix_groups=[([0, 1], 64), ([2, 3, 4], 32)])  # fmt: skip
    for groups, schedule in (([([0, 1], 4), ([2, 3, 4], 2)], "balanced"),
                             ([([0, 1], 2), ([2, 3, 4], 2)], "uniform")):  # fmt: skip
        prefix = splitkv.plan_shared_prefix(groups, 5, case.page_table.shape[1], 16, device)
        check(case, prefix)
        ((_, stacked),) = prefix.passes.values()
        assert stacked.schedule == schedule
    assert stacked_schedule([64, 32]) == {"seq_lens": [64, 32], "schedule": "balanced"}
    assert stacked_schedule((48, 48)) == {"seq_lens": [48, 48]}  # the planner's choice


def test_expected_lengths_steer_the_suffix_pass(dtype, device):
    # Planned for whole tables, the suffix pass cannot see ragged suffixes; given the calls'
    # lengths it plans on each request's keys after its prefix. Request 2 (qlen 2) ends at its
    # prefix and request 4 is in no group: both keep their whole context, as on the device.
    lengths, groups = [130, 100, 64, 90, 60, 33, 45], [([0, 1, 2], 4), ([3, 5], 2)]
    case = gqa_case(lengths, qlen=2, page_size=16, dtype=dtype, device=device,
                    prefix_groups=[(m, pages * 16) for m, pages in groups])  # fmt: skip
    columns = case.page_table.shape[1]
    prefix = splitkv.plan_shared_prefix(groups, 7, columns, 16, device, seq_lens=lengths)
    suffixes = [66, 36, 64, 58, 60, 1, 45]
    assert prefix.suffix_pass_lengths(2, True, columns * 16) == suffixes
    assert prefix.suffix_pass_lengths(2, False, columns * 16) == lengths  # a plain decode
    assert prefix.suffix_pass_lengths(2, True, 48) == [48, 48, 48, 16, 48, 1, 45]  # 3 pages
    check(case, prefix)
    ((suffix, _),) = prefix.passes.values()
    want = splitkv.plan_decode(7, columns * 16, 8, qlen=2, kind="gqa", num_kv_heads=2,
                               head_dim=64, page_size=16, dtype=dtype, device=device,
                               seq_lens=suffixes)  # fmt: skip
    assert (suffix.schedule, suffix.num_splits, suffix.num_programs) == (
        want.schedule, want.num_splits, want.num_programs)  # fmt: skip
    # The lengths only steer the plan: calls of other lengths decode right with it.
    other = gqa_case([70, 65, 100, 33, 5, 40, 90], qlen=2, page_size=16, dtype=dtype,
                     device=device, prefix_groups=[(m, pages * 16) for m, pages in groups],
                     table_columns=columns, seed=1)  # fmt: skip
    check(other, prefix)


def test_expected_lengths_bad_counts_and_types_named(device):
    plan = functools.partial(splitkv.plan_shared_prefix, [([0, 1], 2)], 2, 4, 16, device)
    assert plan(seq_lens=torch.tensor([40, 33])).seq_lens == (40, 33)
    with pytest.raises(ValueError, match=r"^seq_lens: expected one length a request \(2\)"):
        plan(seq_lens=[40])
    with pytest.raises(ValueError, match=r"^seq_lens: "):
        plan(seq_lens=[40, 65])  # past the table's 4 pages of 16
    with pytest.raises(TypeError, match=r"^seq_lens: "):
        plan(seq_lens=torch.tensor([40.0, 33.0]))


def test_chunks_hold_whole_members_of_every_kv_head(dtype, device, monkeypatch):
    # 16 kv heads of 2 query heads at qlen 2: 4 rows a kv head a member; at 8 rows a kv head a
    # chunk, 2 members a chunk and 3 chunks for 5 members.
    monkeypatch.setattr(splitkv.prefix_gqa, "chunk_rows_per_kv_head", lambda spec, kv: 8)
    case = gqa_case([50, 70, 40, 90, 66], 32, 16, qlen=2, page_size=16, dtype=dtype,
                    device=device, shared_prefix=32)  # fmt: skip
    plan = splitkv.plan_shared_prefix([(range(5), 2)], 5, case.page_table.shape[1], 16, device,
                                      num_heads=32, qlen=2, num_kv_heads=16)  # fmt: skip
    rows = gqa_rows_for(plan, 2, 32, 16)
    assert (rows.num_chunks, rows.width) == (3, 16 * 8)
    check(case, plan)


def test_a_chunk_is_one_head_block_a_kv_head_and_at_most_max_gqa_heads(device):
    spec = splitkv.DeviceSpec.preset("h200")  # block_m 64
    assert chunk_rows_per_kv_head(spec, 8) == 64  # llama3-8b, gpt-oss: 512 stacked heads
    assert chunk_rows_per_kv_head(spec, 64) == MAX_GQA_HEADS // 64  # MHA-64: 16 rows
    # llama3-8b's 8 members (4 rows a kv head each) in one chunk of 8 x 32 stacked heads.
    plan = splitkv.plan_shared_prefix([(range(8), 2)], 8, 4, 16, device, device_spec=spec)
    rows = gqa_rows_for(plan, 1, 32, 8)
    assert (rows.num_chunks, rows.width) == (1, 8 * 32)


def test_calls_whose_chunks_would_hold_one_member_decode_plainly(dtype, device, monkeypatch):
    # 2 kv heads of 4 query heads: 4 rows a kv head a member, and 4 a chunk here.
    monkeypatch.setattr(splitkv.prefix_gqa, "chunk_rows_per_kv_head", lambda spec, kv: 4)
    plan = splitkv.plan_shared_prefix([([0, 1], 2)], 2, 4, 16, device)
    assert gqa_rows_for(plan, 1, 8, 2) is None and gqa_rows_for(plan, 1, 4, 2) is not None
    case = gqa_case([50, 40], page_size=16, dtype=dtype, device=device, shared_prefix=32)
    calls = []
    real = splitkv.prefix_gqa.decode_checked
    monkeypatch.setattr(splitkv.prefix_gqa, "decode_checked",
                        lambda *a, **k: calls.append(1) or real(*a, **k))  # fmt: skip
    check(case, plan)
    assert len(calls) == 1


def test_a_sliding_window_decodes_plainly(dtype, device):
    case = gqa_case([90, 70], page_size=16, dtype=dtype, device=device, shared_prefix=48)
    check(case, [([0, 1], 3)], window_left=20)


def test_gqa_prefix_rows_stack_each_kv_heads_rows():
    # Requests of qlen 2 x 4 query heads over 2 kv heads (2 a kv head): q's flat rows are
    # (request, position, kv head, head of that kv head).
    rows = prefix_rows((((1, 2), 1),), 3, 4, 16, 8, "cpu", kv_heads=2, heads_per_kv=2)
    assert (rows.num_chunks, rows.width) == (1, 16)
    gather = rows.gather.view(2, 8)  # [kv head, stacked row]
    for kv_head in range(2):
        heads = gather[kv_head] % 4  # q head of each stacked row
        assert ((heads // 2) == kv_head).all()
    assert sorted(gather.flatten().tolist()) == list(range(8, 24))  # requests 1 and 2
    assert (rows.scatter[rows.gather] == torch.arange(16)).all()


def test_plan_for_kv_heads_and_bad_counts_named(device):
    plan = splitkv.plan_shared_prefix([([0, 1], 2)], 2, 4, 16, device, num_heads=8,
                                      num_kv_heads=2)  # fmt: skip
    assert ("gqa", 1, 8, 2) in plan.rows
    with pytest.raises(ValueError, match=r"^num_kv_heads: expected a divisor of num_heads=8"):
        splitkv.plan_shared_prefix([([0, 1], 2)], 2, 4, 16, device, num_heads=8, num_kv_heads=3)
    with pytest.raises(ValueError, match=r"^num_kv_heads: expected a divisor of num_heads=None"):
        splitkv.plan_shared_prefix([([0, 1], 2)], 2, 4, 16, device, num_kv_heads=2)


def test_under_capture_an_unbuilt_shape_is_named(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    plan = splitkv.plan_shared_prefix([([0, 1, 2], 2)], 3, 6, 16, "cpu")
    plan = dataclasses.replace(plan, device=torch.device("cuda"), rows={})
    with pytest.raises(ValueError, match=r"num_heads=8, qlen=1, num_kv_heads=2\)"):
        gqa_rows_for(plan, 1, 8, 2)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_gqa_cascade_captured_once_replayed_with_new_lengths():
    columns, groups = 12, [([0, 1, 2], 64), ([4], 32)]
    prefix = splitkv.plan_shared_prefix([([0, 1, 2], 4), ([4], 2)], 5, columns, 16, "cuda",
                                        num_heads=8, num_kv_heads=2)  # fmt: skip
    inputs = {"page_size": 16, "dtype": torch.bfloat16, "device": "cuda",
              "table_columns": columns, "prefix_groups": groups}  # fmt: skip
    cases = [
        gqa_case([64 + a, 64 + b, 60, 100 + a, 32 + b], seed=s, **inputs)
        for s, (a, b) in enumerate([(1, 70), (90, 3), (0, 0)])
    ]
    pool = max(case.k_cache.shape[0] for case in cases)
    k, v = (torch.full((pool, 16, 2, 64), float("nan"), dtype=torch.bfloat16, device="cuda")
            for _ in range(2))  # fmt: skip
    q, table, lens = (t.clone() for t in (cases[0].q, cases[0].page_table, cases[0].seq_lens))
    result = {}

    def step():
        result["out"] = splitkv.gqa_decode_shared_prefix(q, k, v, table, lens, prefix)

    graph = capture_cuda_graph(step)
    for case in cases:
        k[: case.k_cache.shape[0]].copy_(case.k_cache)
        v[: case.v_cache.shape[0]].copy_(case.v_cache)
        for static, new in ((q, case.q), (table, case.page_table), (lens, case.seq_lens)):
            static.copy_(new)
        graph.replay()
        torch.cuda.synchronize()
        want = splitkv.reference.gqa_decode(q, k, v, table, lens)
        check_against_reference(*result["out"], *want)

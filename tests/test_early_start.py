"""`early_start` (Gluon stage 1 launched as a programmatic dependent of the kernel ahead of it):
where the planner allows it, and on a Hopper GPU that back-to-back calls sharing one workspace
stay exact (the next call's stage 1 starts while this call's merge still reads the partials)
and that keys written by the kernel just ahead (the new tokens') are seen."""

import pytest
import torch

import splitkv
from splitkv.device import DeviceSpec
from splitkv.testing import capture_cuda_graph, check_against_reference, random_mla_case

# The Gluon kernels are Triton 3.6's (warp_specialized.GLUON_TRITON).
pytestmark = pytest.mark.triton_3_6

H200 = {"device": "meta", "device_spec": DeviceSpec.preset("h200")}
RAGGED = [4800, 4, 65, 700, 130, 4097, 2, 2000]  # each >= qlen


def test_early_start_knob():
    loop = splitkv.plan_decode(8, 68096, 12, **H200)  # the 16-row keys-as-rows program loop
    assert loop.program_loop and loop.warp_specialized and loop.early_start  # 96 rows
    assert not splitkv.plan_decode(48, 327600, 12, **H200).early_start  # 576 rows
    assert splitkv.plan_decode(8, 68096, 12, early_start=True, **H200).early_start
    # By default on plans of up to 256 query rows (batch x qlen x heads).
    for batch, context, heads, early in ((8, 8192, 12, True), (1, 68096, 16, True),
                                         (1, 8192, 128, True), (16, 8192, 16, True),
                                         (8, 8192, 128, False), (48, 8192, 12, False)):  # fmt: skip
        plan = splitkv.plan_decode(batch, context, heads, **H200)
        assert plan.schedule == "uniform" and plan.warp_specialized
        assert plan.early_start == early, (batch, context, heads)
    # Splits of one key block take the Gluon kernel with it (16 rows), and not without it.
    one_block = splitkv.plan_decode(1, 8192, 12, **H200)
    assert one_block.num_splits == 128 and one_block.warp_specialized and one_block.early_start
    assert not splitkv.plan_decode(1, 8192, 12, early_start=False, **H200).warp_specialized
    assert splitkv.plan_decode(8, 8192, 128, early_start=True, **H200).early_start  # uniform
    with pytest.raises(ValueError, match="early_start: needs the warp-specialized"):
        splitkv.plan_decode(8, 8192, 12, early_start=True, warp_specialized=False, **H200)
    with pytest.raises(ValueError, match="early_start: needs the warp-specialized"):
        splitkv.plan_decode(8, 68096, 12, early_start=True, dependent_launch=False, **H200)
    with pytest.raises(TypeError, match="early_start: expected a bool"):
        splitkv.plan_decode(8, 68096, 12, early_start=1, **H200)


def hopper() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


def early_plan(case, heads, qlen, page_size, **knobs):
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=torch.bfloat16, device="cuda",
                               warp_specialized=True, early_start=True, **knobs)  # fmt: skip
    assert plan.early_start and plan.warp_specialized
    return plan


KNOBS = [
    {"schedule": "uniform", "num_splits": 4},  # the uniform kernel, 16 rows
    {"schedule": "uniform", "num_splits": 2, "block_h": 64},  # 64 rows
    {"schedule": "balanced", "num_programs": 7},  # the program loop
    {"schedule": "balanced", "num_programs": 40, "whole_pieces": True},
]


@pytest.mark.gpu
@pytest.mark.skipif(not hopper(), reason="programmatic dependent launch of Gluon kernels: Hopper")
@pytest.mark.parametrize("knobs", KNOBS)
@pytest.mark.parametrize("heads,qlen,page_size", [(12, 1, 64), (16, 2, 16)])
def test_back_to_back_calls_share_the_workspace(knobs, heads, qlen, page_size):
    # Three calls in one graph on one plan: each call's stage 1 may start while the merge ahead
    # still reads the workspace's partials, so it must not write them before its wait.
    cases = [random_mla_case(RAGGED, heads, qlen=qlen, page_size=page_size,
                             dtype=torch.bfloat16, device="cuda", seed=s)
             for s in range(3)]  # fmt: skip
    _, kv, table, lens = cases[0].args
    plan = early_plan(cases[0], heads, qlen, page_size, **knobs)
    qs = [case.q for case in cases]
    outs = [torch.empty(len(RAGGED), qlen, heads, 512, dtype=torch.bfloat16, device="cuda")
            for _ in cases]  # fmt: skip
    lses = [torch.empty(out.shape[:3], device="cuda") for out in outs]

    def step():
        for q, out, lse in zip(qs, outs, lses, strict=True):
            splitkv.mla_decode(q, kv, table, lens, plan=plan, out=out, lse=lse)

    graph = capture_cuda_graph(step)
    for out in outs:
        out.fill_(float("nan"))
    for _ in range(3):
        graph.replay()
    for q, out, lse in zip(qs, outs, lses, strict=True):
        check_against_reference(out, lse, *splitkv.reference.mla_decode(q, kv, table, lens))


@pytest.mark.gpu
@pytest.mark.skipif(not hopper(), reason="programmatic dependent launch of Gluon kernels: Hopper")
@pytest.mark.parametrize("knobs", KNOBS[::2])
def test_new_tokens_written_just_ahead_are_seen(knobs):
    # The contract: the kernel just ahead of stage 1 may write q and the new tokens' keys (each
    # request's last qlen positions); stage 1 reads those only after its wait.
    qlen, heads, page_size = 2, 12, 64
    case = random_mla_case(RAGGED, heads, qlen=qlen, page_size=page_size, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    q, kv, table, lens = case.args
    plan = early_plan(case, heads, qlen, page_size, **knobs)
    positions = torch.cat([torch.arange(n - qlen, n) for n in RAGGED]).cuda()
    owners = torch.cat([torch.full((qlen,), b) for b in range(len(RAGGED))]).cuda()
    rows = table[owners, positions // page_size].long() * page_size + positions % page_size
    rows_view = kv.view(-1, kv.shape[-1])
    fresh_keys = [torch.randn(len(rows), kv.shape[-1], device="cuda").to(kv.dtype)
                  for _ in range(2)]  # fmt: skip
    fresh_q = [torch.randn_like(q) for _ in range(2)]
    outs = [torch.empty(len(RAGGED), qlen, heads, 512, dtype=q.dtype, device="cuda")
            for _ in range(2)]  # fmt: skip

    def step():
        for keys, new_q, out in zip(fresh_keys, fresh_q, outs, strict=True):
            rows_view.index_copy_(0, rows, keys)  # the kernel just ahead writes the new keys
            q.copy_(new_q)  # and the queries
            splitkv.mla_decode(q, kv, table, lens, plan=plan, out=out, return_lse=False)

    graph = capture_cuda_graph(step)
    for out in outs:
        out.fill_(float("nan"))
    graph.replay()
    for keys, new_q, out in zip(fresh_keys, fresh_q, outs, strict=True):
        rows_view.index_copy_(0, rows, keys)
        ref_out, _ = splitkv.reference.mla_decode(new_q, kv, table, lens)
        check_against_reference(out, None, ref_out, None)

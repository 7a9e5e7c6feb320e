"""One uniform split on the Gluon kernel (`whole_pieces` on a one-split plan): every program
holds its request's every key, so it writes the request's rows of out and lse itself and no
merge runs. Where the planner takes it, that the kernel compiles for it, and on a GPU that it
equals the reference for every consumer (the alternating pair, the column-splitting pair, the
keys-as-rows warpgroup), with strided outputs, empty requests and new lengths under a graph."""

import pytest
import torch
from test_compiled_kernel import compiled
from test_warp_specialized import check_into_strided_outputs, lengths_for

import splitkv
from splitkv.device import DeviceSpec
from splitkv.mla import merge_follows
from splitkv.testing import capture_cuda_graph, check_against_reference, random_mla_case

H200 = {"device": "meta", "device_spec": DeviceSpec.preset("h200")}


@pytest.mark.triton_3_6
def test_on_by_default_for_one_split_only():
    one = splitkv.plan_decode(128, 8192, 128, **H200)
    assert one.num_splits == 1 and one.schedule == "uniform" and one.warp_specialized
    assert one.whole_pieces and not merge_follows(one)
    assert merge_follows(one, launched=False)  # the Triton fallback writes partials
    several = splitkv.plan_decode(8, 8192, 128, **H200)
    assert several.num_splits > 1 and not several.whole_pieces and merge_follows(several)
    kept = splitkv.plan_decode(128, 8192, 128, whole_pieces=False, **H200)
    assert not kept.whole_pieces and merge_follows(kept)
    narrow = splitkv.plan_decode(4, 8192, 12, num_splits=1, warp_specialized=True, **H200)
    assert narrow.keys_as_rows and narrow.whole_pieces
    streams = splitkv.plan_decode(4, 8192, 12, num_splits=1, warp_specialized=True,
                                  merge_streams=True, **H200)  # fmt: skip
    assert not streams.whole_pieces  # its merge waits for flags stage 1 raises
    triton = splitkv.plan_decode(4, 8192, 12, num_splits=1, warp_specialized=False, **H200)
    assert not triton.whole_pieces and merge_follows(triton)


def test_asking_for_it_on_several_splits_names_what_it_needs():
    with pytest.raises(ValueError, match=r"whole_pieces: needs .* one uniform split"):
        splitkv.plan_decode(8, 8192, 128, num_splits=4, whole_pieces=True, **H200)


def test_the_alternating_consumers_compile_with_the_output_store():
    # The uniform kernel's epilogue writes out / lse in place of the partial; the block loop
    # keeps its 84 wgmma and 15 waits (not serialized) and nothing spills.
    report = compiled("--warp-specialized", "--heads", "128", "--alternate-blocks",
                      "--whole-pieces")  # fmt: skip
    assert report["wgmma"] == 84 and report["wgmma_waits"] < 20
    assert report["stack_bytes"] == 0 and report["loop_spills"] == 0


def one_split_plan(case, heads, qlen, page_size, **knobs):
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * page_size, heads, qlen=qlen,
                               page_size=page_size, dtype=case.q.dtype, device="cuda",
                               num_splits=1, warp_specialized=True, **knobs)  # fmt: skip
    assert plan.whole_pieces and not merge_follows(plan)
    # Stage 1 writes no partial and no merge reads one: NaNs here would reach the output.
    plan.workspace.partial_o.fill_(float("nan"))
    plan.workspace.partial_lse.fill_(float("nan"))
    return plan


# The consumers: 128 heads (two 64-row head blocks: the alternating pair, or the column-
# splitting pair when asked), 16 x 4 (one 64-row block: the column-splitting pair), 12 x 1 and
# 16 x 2 (16 and 32 rows: keys as rows).
CONSUMERS = [(128, 1, {}), (128, 1, {"alternate_blocks": False}), (16, 4, {}), (12, 1, {}),
             (16, 2, {})]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen,knobs", CONSUMERS)
@pytest.mark.parametrize("page_size", [8, 64])
@pytest.mark.parametrize("return_lse", [True, False])
def test_matches_the_reference_into_strided_outputs(heads, qlen, knobs, page_size, return_lse):
    # Empty requests (their rows must still be written: 0 and lse -inf), tails inside a block,
    # one key; out a view whose heads are 1,024 elements apart, lse one whose requests are
    # 2 x qlen x heads apart.
    case = random_mla_case(lengths_for(qlen), heads, qlen=qlen, page_size=page_size,
                           dtype=torch.bfloat16, device="cuda")  # fmt: skip
    plan = one_split_plan(case, heads, qlen, page_size, **knobs)
    check_into_strided_outputs(case, plan, return_lse)
    assert plan.workspace.partial_lse.isnan().all()  # no partial written


@pytest.mark.gpu
@pytest.mark.parametrize("heads,qlen", [(128, 1), (12, 1)])
@pytest.mark.parametrize("early_start", [False, True])
def test_a_captured_graph_replays_new_lengths(heads, qlen, early_start):
    # Requests that empty and refill between replays, and back to back calls launched as
    # dependents of each other (early_start: the next call's prologue overlaps this one).
    case = random_mla_case([20000, 4097, 65, 1], heads, qlen=qlen, dtype=torch.bfloat16,
                           device="cuda")  # fmt: skip
    plan = one_split_plan(case, heads, qlen, 64, early_start=early_start)
    out = torch.empty_like(case.q[..., :512])
    lse = torch.empty(case.q.shape[:3], dtype=torch.float32, device="cuda")

    def twice():
        splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse)
        splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse)

    graph = capture_cuda_graph(twice)
    for lengths in ([1, 4000, 65, 0], [0, 0, 0, 0], [19999, 127, 1, 1]):  # within the pages
        case.seq_lens.copy_(torch.tensor(lengths, dtype=torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
        check_against_reference(out, lse, ref_out, ref_lse)


@pytest.mark.gpu
def test_float16_and_queries_through_registers():
    # q's rows 640 elements apart: no query descriptors, the warps store the rows.
    case = random_mla_case(lengths_for(1), 128, dtype=torch.float16, device="cuda")
    wide = torch.full((*case.q.shape[:3], 640), float("nan"), dtype=case.q.dtype, device="cuda")
    wide[..., :576] = case.q
    args = (wide[..., :576], case.kv_cache, case.page_table, case.seq_lens)
    out, lse = splitkv.mla_decode(*args, plan=one_split_plan(case, 128, 1, 64))
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*args))

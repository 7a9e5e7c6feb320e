"""torch.ops.splitkv.mla_decode, gqa_decode and merge_states: the same values as the functions,
and traceable by torch.compile without graph breaks."""

import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case


def test_op_matches_the_function(device):
    case = random_mla_case([90, 4], 4, qlen=2, page_size=16, dtype=torch.float16, device=device)
    out, lse = torch.ops.splitkv.mla_decode(*case.args)
    want_out, want_lse = splitkv.mla_decode(*case.args)
    assert torch.equal(out, want_out) and torch.equal(lse, want_lse)


def test_op_passes_torch_library_checks(device):
    case = random_mla_case([40, 17], 2, page_size=8, dtype=torch.float16, device=device)
    torch.library.opcheck(
        torch.ops.splitkv.mla_decode.default,
        case.args,
        {"scale": 0.05},
        test_utils=("test_schema", "test_faketensor"),
    )


def test_compiles_without_graph_breaks(device):
    case = random_mla_case([70, 33], 4, page_size=16, dtype=torch.float16, device=device)

    def attend(q, kv, table, lens):
        out, lse = torch.ops.splitkv.mla_decode(q, kv, table, lens)
        return out.float() * 2.0, lse

    compiled = torch.compile(attend, backend="aot_eager", fullgraph=True)
    out, lse = compiled(*case.args)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference((out / 2).to(case.q.dtype), lse, ref_out, ref_lse)


def test_gqa_op_matches_and_compiles(device):
    from splitkv.testing import random_gqa_case

    case = random_gqa_case([50, 3], 8, 2, 64, dtype=torch.float16, device=device, sinks=True)
    features = {"window_left": 20, "logit_cap": 10.0, "sinks": case.sinks}
    want_out, want_lse = splitkv.gqa_decode(*case.args, **features)
    out, lse = torch.ops.splitkv.gqa_decode(*case.args, **features)
    assert torch.equal(out, want_out) and torch.equal(lse, want_lse)
    torch.library.opcheck(
        torch.ops.splitkv.gqa_decode.default,
        case.args,
        features,
        test_utils=("test_schema", "test_faketensor"),
    )
    compiled = torch.compile(
        lambda *a: torch.ops.splitkv.gqa_decode(*a, **features), backend="aot_eager", fullgraph=True
    )
    out, lse = compiled(*case.args)
    assert torch.equal(out, want_out)


def test_merge_states_op_matches_and_compiles(device):
    outs = torch.randn(3, 2, 4, 64, device=device).to(torch.float16)
    lses = torch.randn(3, 2, 4, device=device)
    lses[1, 0] = float("-inf")  # a state without keys
    want_out, want_lse = splitkv.merge_states(outs, lses)
    out, lse = torch.ops.splitkv.merge_states(outs, lses)
    assert torch.equal(out, want_out) and torch.equal(lse, want_lse)
    torch.library.opcheck(torch.ops.splitkv.merge_states.default, (outs, lses),
                          test_utils=("test_schema", "test_faketensor"))  # fmt: skip
    compiled = torch.compile(lambda o, s: torch.ops.splitkv.merge_states(o, s), backend="aot_eager",
                             fullgraph=True)  # fmt: skip
    out, lse = compiled(outs, lses)
    assert torch.equal(out, want_out) and torch.equal(lse, want_lse)

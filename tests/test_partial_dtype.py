"""bfloat16 partials between the two stages (`plan_decode(partial_dtype=torch.bfloat16)`): stage
1 writes them, the merge sums them in fp32; every schedule and both kinds against the
reference (each partial carries bf16 rounding, well inside the tests' 2e-2 tolerance)."""

import pytest
import torch

import splitkv
from splitkv.testing import check_against_reference, random_gqa_case, random_mla_case

LENGTHS = [0, 1, 63, 64, 65, 300]


def mla_plan(case, heads, qlen, device, dtype, **knobs):
    batch, columns = case.page_table.shape
    return splitkv.plan_decode(batch, columns * 16, heads, qlen=qlen, page_size=16,
                               dtype=dtype, device=device, partial_dtype=torch.bfloat16,
                               **knobs)  # fmt: skip


@pytest.mark.parametrize(
    "knobs",
    [
        {"num_splits": 4},
        {"num_splits": 4, "merge_block_s": 1, "merge_d_split": 1},  # the serial merge
        {"schedule": "balanced", "num_programs": 5},
        {"schedule": "balanced", "num_programs": 5, "program_loop": True},
    ],
    ids=["uniform", "serial-merge", "balanced", "program-loop"],
)
@pytest.mark.parametrize("heads,qlen", [(4, 1), (16, 2)])
def test_mla_bf16_partials_match_the_reference(knobs, heads, qlen, dtype, device):
    lengths = [n if n == 0 else max(n, qlen) for n in LENGTHS]
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=16, dtype=dtype, device=device)
    plan = mla_plan(case, heads, qlen, device, dtype, **knobs)
    assert plan.workspace.partial_o.dtype == torch.bfloat16
    assert plan.workspace.partial_lse.dtype == torch.float32
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


@pytest.mark.parametrize("schedule", ["uniform", "balanced"])
def test_gqa_bf16_partials_match_the_reference(schedule, dtype, device):
    case = random_gqa_case(LENGTHS, 8, 2, 64, page_size=16, dtype=dtype, device=device)
    batch, columns = case.page_table.shape
    plan = splitkv.plan_decode(batch, columns * 16, 8, page_size=16, dtype=dtype,
                               device=device, kind="gqa", num_kv_heads=2, head_dim=64,
                               schedule=schedule, partial_dtype=torch.bfloat16)  # fmt: skip
    out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args))


def test_the_default_stays_float32_and_bad_types_are_named():
    plan = splitkv.plan_decode(2, 1024, 16, device="cpu")
    assert plan.partial_dtype == torch.float32
    assert plan.workspace.partial_o.dtype == torch.float32
    for bad in (torch.float16, "bfloat16", None):
        with pytest.raises(TypeError, match=r"partial_dtype: expected torch\.float32 or"):
            splitkv.plan_decode(2, 1024, 16, device="cpu", partial_dtype=bad)
    half = splitkv.plan_decode(2, 1024, 16, device="cpu", partial_dtype=torch.bfloat16)
    assert "MiB" in repr(half.workspace)
    full_bytes = plan.workspace.partial_o.numel() * 4
    assert half.workspace.partial_o.numel() * half.workspace.partial_o.element_size() * 2 == (
        full_bytes
    )

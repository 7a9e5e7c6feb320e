"""Several kv heads in one GQA stage-1 program (`plan_decode(kv_pack=)`, splitkv/gqa_pack.py):
the same output as unpacked plans and the fp32 reference on every schedule and feature, and
clear errors where a pack cannot be built."""

import dataclasses

import pytest
import torch

import splitkv
from splitkv.testing import check_against_reference, random_gqa_case


def packed_and_unpacked(case, plan_args: dict, features: dict):
    """Decode `case` on a packed plan and its unpacked twin; check both against the reference
    and each other."""
    outs = []
    for pack in (plan_args.pop("kv_pack"), 1):
        plan = splitkv.plan_decode(**plan_args, kv_pack=pack)
        assert plan.kv_pack == pack
        out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True, **features)
        outs.append((out, lse))
    ref_out, ref_lse = splitkv.reference.gqa_decode(*case.args, **features)
    for out, lse in outs:
        check_against_reference(out, lse, ref_out, ref_lse)
    check_against_reference(*outs[0], *outs[1])


@pytest.mark.parametrize(
    "q_heads,kv_heads,head_dim,qlen,pack,knobs",
    [
        (8, 4, 64, 1, 2, {"num_splits": 2}),  # gpt-oss's shape: 2 x 8 rows fill 16
        (8, 4, 64, 1, 2, {"num_splits": 1, "whole_pieces": True}),  # writes the output itself
        (8, 4, 32, 2, 2, {"schedule": "balanced", "num_programs": 3}),
        (4, 4, 48, 2, 4, {"num_splits": 3}),  # 4 heads of 2 rows; head dim padded to 64
        (8, 2, 80, 1, 2, {"num_splits": 3}),  # 4 rows a head, half the tile still padding
    ],
)
def test_packed_kv_heads_match_the_reference(q_heads, kv_heads, head_dim, qlen, pack, knobs,
                                             dtype, device):  # fmt: skip
    # Lengths: empty, just the queries, inside one page, across pages; NaN in unowned slots.
    lengths = [70, 0, qlen, 33]
    case = random_gqa_case(lengths, q_heads, kv_heads, head_dim, qlen=qlen, page_size=16,
                           dtype=dtype, device=device)  # fmt: skip
    plan_args = dict(batch_size=4, max_seq_len=case.page_table.shape[1] * 16,
                     num_heads=q_heads, qlen=qlen, page_size=16, dtype=dtype, device=device,
                     kind="gqa", num_kv_heads=kv_heads, head_dim=head_dim, kv_pack=pack,
                     **knobs)  # fmt: skip
    packed_and_unpacked(case, plan_args, {})


@pytest.mark.parametrize("knobs", [{"num_splits": 2}, {"schedule": "balanced"}])
def test_packed_kv_heads_with_sinks_window_and_cap(knobs, dtype, device):
    case = random_gqa_case([90, 20, 3], 8, 4, 64, page_size=8, dtype=dtype, device=device)
    sinks = torch.randn(8, device=device)
    plan_args = dict(batch_size=3, max_seq_len=case.page_table.shape[1] * 8, num_heads=8,
                     page_size=8, dtype=dtype, device=device, kind="gqa", num_kv_heads=4,
                     head_dim=64, window_left=17, kv_pack=2, **knobs)  # fmt: skip
    features = {"sinks": sinks, "window_left": 17, "logit_cap": 30.0, "scale": 0.5}
    packed_and_unpacked(case, plan_args, features)


def test_packed_kv_heads_from_caches_laid_out_apart(dtype, device):
    # A head's columns sit at its own head stride: values in a cache of other strides, and a
    # key cache whose heads are not adjacent (every other head of a wider tensor).
    case = random_gqa_case([45, 64], 8, 4, 64, page_size=16, dtype=dtype, device=device)
    wide_k = torch.full((*case.k_cache.shape[:2], 8, 64), float("nan"), dtype=dtype,
                        device=device)  # fmt: skip
    wide_k[:, :, ::2] = case.k_cache
    apart = dataclasses.replace(case, k_cache=wide_k[:, :, ::2], v_cache=case.v_cache.clone())
    assert apart.k_cache.stride() != apart.v_cache.stride()
    plan_args = dict(batch_size=2, max_seq_len=case.page_table.shape[1] * 16, num_heads=8,
                     page_size=16, dtype=dtype, device=device, kind="gqa", num_kv_heads=4,
                     head_dim=64, kv_pack=2, num_splits=2)  # fmt: skip
    packed_and_unpacked(apart, plan_args, {})


def test_packed_plans_count_programs_of_kv_head_groups():
    spec = splitkv.DeviceSpec.preset("h200")
    shape = dict(kind="gqa", num_kv_heads=8, head_dim=64, device="meta", device_spec=spec)
    one = splitkv.plan_decode(8, 32768, 64, **shape, num_splits=4)
    two = splitkv.plan_decode(8, 32768, 64, **shape, num_splits=4, kv_pack=2)
    assert (one.kv_pack, one.block_h, one.num_head_blocks) == (1, 16, 1)
    assert (two.kv_pack, two.block_h, two.num_head_blocks) == (2, 16, 1)
    assert two.split_grid * 2 == one.split_grid


@pytest.mark.parametrize(
    "shape,pack,match",
    [
        (dict(num_heads=8, num_kv_heads=4, head_dim=64), 3, "power of two"),
        (dict(num_heads=12, num_kv_heads=6, head_dim=64), 4, "divisor of num_kv_heads=6"),
        (dict(num_heads=64, num_kv_heads=4, head_dim=64), 2, "more than one 16-row tile"),
        (dict(num_heads=8, num_kv_heads=4, head_dim=192), 2, "512 columns"),
        (dict(num_heads=8, num_kv_heads=4, head_dim=64), 0, "kv_pack"),
    ],
)
def test_packs_that_cannot_be_built_are_refused(shape, pack, match):
    spec = splitkv.DeviceSpec.preset("h200")
    with pytest.raises(ValueError, match=match):
        splitkv.plan_decode(2, 1024, **shape, kind="gqa", kv_pack=pack, device="meta",
                            device_spec=spec)  # fmt: skip


def test_mla_takes_no_pack():
    spec = splitkv.DeviceSpec.preset("h200")
    with pytest.raises(ValueError, match="kv_pack: packs GQA kv heads"):
        splitkv.plan_decode(2, 1024, 16, kv_pack=2, device="meta", device_spec=spec)
    with pytest.raises(TypeError, match="kv_pack"):
        splitkv.plan_decode(2, 1024, 8, kind="gqa", num_kv_heads=4, head_dim=64, kv_pack=2.0,
                            device="meta", device_spec=spec)  # fmt: skip


def h200_gqa_plan(batch: int, keys: int, q_heads: int, kv_heads: int, head_dim: int,
                  **knobs) -> splitkv.DecodePlan:  # fmt: skip
    return splitkv.plan_decode(batch, keys, q_heads, kind="gqa", num_kv_heads=kv_heads,
                               head_dim=head_dim, device="meta",
                               device_spec=splitkv.DeviceSpec.preset("h200"),
                               **knobs)  # fmt: skip


@pytest.mark.parametrize(
    "batch,keys,knobs,packed",
    [
        (8, 131072, {}, True),  # uniform splits: 490.4 -> 476.5 us on the H200
        (256, 4096, {}, True),  # one split either way, 4 rounds unpacked, 2 packed: 495.3 -> 473.7
        (96, 4096, {}, True),  # 2 rounds unpacked, one packed: 212.3 -> 193.9
        (160, 1500, {}, False),  # 3 rounds unpacked, 2 of twice as long packed (+16.5%)
        (38, 358, {}, False),  # one round either way (+17.3%)
        (64, 8000, {"seq_lens": [1000 + 110 * i for i in range(64)]}, True),  # balanced
        (16, 2048, {}, False),  # packed, the one split would turn to 4 splits (+13%)
        (32, 4096, {}, False),  # ... to 2 (+4.5%): splits of 2,048 keys, the same grid
        (48, 32768, {}, True),  # the same grid on splits of 16,384 keys: 1106.4 -> 1040.4 (H100)
        (48, 8192, {}, True),  # ... of 4,096 keys (3 stages): 283.6 -> 273.5 (H100)
        (8, 131072, {"qlen": 2}, False),  # 16 rows a kv head: no padding to fill
        (8, 131072, {"dtype": torch.float32}, False),  # the tile rules' 16-bit tables
        (8, 131072, {"num_splits": 8}, False),  # a pinned split count plans as asked
        (8, 131072, {"kv_pack": 1}, False),
    ],
)
def test_default_packs_gpt_oss_at_qlen_1_where_its_split_rule_agrees(batch, keys, knobs,
                                                                     packed):  # fmt: skip
    # The batches as timed, their lengths given: a plan without them is a CUDA graph's,
    # balanced from two requests (v0.2.65), where the uniform rows' measurements do not apply.
    plan = h200_gqa_plan(batch, keys, 64, 8, 64, **{"seq_lens": [keys] * batch, **knobs})
    assert plan.kv_pack == (2 if packed else 1), plan


@pytest.mark.parametrize(
    "batch,keys,knobs",
    [
        (8, 131072, {}),  # packed, uniform splits
        (64, 8000, {"seq_lens": [1000 + 110 * i for i in range(64)]}),  # packed, balanced
        (8, 131072, {"partial_dtype": torch.bfloat16}),
        (160, 1500, {}),  # left unpacked
        (8, 4096, {"window_left": 127}),
    ],
)
def test_default_pack_is_its_pinned_plan_with_its_own_workspace(batch, keys, knobs, monkeypatch):
    plans = []
    splitkv.plan.plan_decode.forget()  # else a shape planned before returns at once
    real = splitkv.plan.plan_decode
    monkeypatch.setattr(
        splitkv.plan, "plan_decode", lambda *a, **k: plans.append(k) or real(*a, **k)
    )
    plan = h200_gqa_plan(batch, keys, 64, 8, 64, **knobs)
    # The two packs, each planned once (the default takes one of them, not a third plan).
    assert sorted(k["kv_pack"] for k in plans) == [1, 2]
    pinned = h200_gqa_plan(batch, keys, 64, 8, 64, kv_pack=plan.kv_pack, **knobs)
    assert plan == pinned
    for name in ("partial_o", "partial_lse", "piece_ranges", "split_flags"):
        mine, its = getattr(plan.workspace, name), getattr(pinned.workspace, name)
        assert (mine is None) == (its is None), name
        if mine is not None:
            assert (mine.shape, mine.dtype, mine.device) == (its.shape, its.dtype, its.device)


@pytest.mark.parametrize("q_heads,kv_heads,head_dim", [(64, 8, 128), (32, 8, 128), (32, 8, 64)])
def test_default_leaves_other_shapes_unpacked(q_heads, kv_heads, head_dim):
    # Head dim 128 packed to 256 columns ran 1-9% slower (qwen-64-8, llama3-8b); 4 rows a kv
    # head would leave half the packed tile padding (not measured).
    assert h200_gqa_plan(8, 131072, q_heads, kv_heads, head_dim).kv_pack == 1


def test_interpreter_plans_stay_unpacked():
    # The default is the H200's measured rule; the CPU's interpreter plans keep one kv head.
    plan = splitkv.plan_decode(8, 4096, 64, kind="gqa", num_kv_heads=8, head_dim=64,
                               device="cpu", dtype=torch.float16)  # fmt: skip
    assert plan.kv_pack == 1

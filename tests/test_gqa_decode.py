"""splitkv.gqa_decode against the fp32 reference: head ratios (MHA, GQA, MQA), head dims, page
sizes, MTP, sliding window, logit soft-cap, attention sinks, NaN in every unowned slot."""

import dataclasses

import pytest
import torch

import splitkv
from splitkv.mla import merge_follows
from splitkv.testing import check_against_reference, random_gqa_case


def run_and_check(case, **kwargs):
    out, lse = splitkv.gqa_decode(*case.args, validate=True, **kwargs)
    features = {k: v for k, v in kwargs.items() if k != "plan"}
    ref_out, ref_lse = splitkv.reference.gqa_decode(*case.args, **features)
    check_against_reference(out, lse, ref_out, ref_lse)
    return out, lse


@pytest.mark.parametrize("q_heads,kv_heads", [(4, 4), (8, 2), (4, 1), (12, 3)])
def test_head_ratios(q_heads, kv_heads, dtype, device):
    case = random_gqa_case([70, 1, 33], q_heads, kv_heads, 64, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    run_and_check(case)


def test_more_than_128_query_heads_run_in_head_blocks(dtype, device):
    # 160 query heads over 2 kv heads x qlen 2: 160 rows a kv head, several head blocks each
    # (the GQA cascade's stacked chunks reach 8 kv heads x 64 rows).
    case = random_gqa_case([37, 5], 160, 2, 32, qlen=2, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    run_and_check(case)


@pytest.mark.parametrize("head_dim", [16, 64, 80, 128, 256])
def test_head_dims(head_dim, dtype, device):
    case = random_gqa_case([40, 17], 4, 2, head_dim, page_size=8, dtype=dtype, device=device)
    run_and_check(case)


@pytest.mark.parametrize("page_size", [1, 2, 4, 16, 64, 256])
def test_page_sizes_and_boundaries(page_size, dtype, device):
    qlen = 1 + page_size.bit_length() % 4
    lengths = [0, max(1, qlen), page_size - 1, page_size, page_size + 1, 2 * page_size + 3]
    lengths = [n if n == 0 else max(n, qlen) for n in lengths]
    case = random_gqa_case(lengths, 4, 2, 32, qlen=qlen, page_size=page_size, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(6, 3 * page_size + 3, 4, qlen=qlen, page_size=page_size,
                               dtype=dtype, device=device, kind="gqa", num_kv_heads=2,
                               head_dim=32, num_splits=3)  # fmt: skip
    run_and_check(case, plan=plan)


@pytest.mark.parametrize("qlen", [2, 8])
def test_mtp(qlen, dtype, device):
    case = random_gqa_case([qlen, 50, 97], 8, 2, 64, qlen=qlen, dtype=dtype, device=device)
    run_and_check(case)


@pytest.mark.parametrize("window_left", [0, 5, 40, 1000])
@pytest.mark.parametrize("qlen", [1, 3])
def test_sliding_window(window_left, qlen, dtype, device):
    case = random_gqa_case([150, 64, qlen, 0], 4, 2, 32, qlen=qlen, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(4, 160, 4, qlen=qlen, page_size=16, dtype=dtype, device=device,
                               kind="gqa", num_kv_heads=2, head_dim=32, num_splits=4,
                               window_left=window_left)  # fmt: skip
    run_and_check(case, plan=plan, window_left=window_left)


@pytest.mark.parametrize("logit_cap", [1.0, 30.0])
def test_logit_soft_cap(logit_cap, dtype, device):
    case = random_gqa_case([90, 20], 4, 1, 64, dtype=dtype, device=device)
    run_and_check(case, logit_cap=logit_cap, scale=0.5)  # big logits: the cap matters


def test_attention_sinks(dtype, device):
    case = random_gqa_case([90, 0, 5], 8, 2, 64, qlen=2, dtype=dtype, device=device)
    sinks = torch.randn(8, device=device) * 2
    out, lse = run_and_check(case, sinks=sinks)
    # Without keys a row softmaxes over the sink alone: no value, lse = the sink's logit.
    assert torch.equal(out[1], torch.zeros_like(out[1]))
    assert torch.allclose(lse[1], sinks.expand(2, 8))


def test_window_cap_and_sinks_together(dtype, device):
    case = random_gqa_case([200, 31, 4], 6, 2, 64, qlen=4, page_size=8, dtype=dtype,
                           device=device)  # fmt: skip
    sinks = torch.randn(6, device=device)
    run_and_check(case, window_left=17, logit_cap=5.0, sinks=sinks)


def test_128_key_blocks_with_sinks_window_and_small_pages(dtype, device):
    # Head dim 64 takes 128-key blocks on NVIDIA (plan.py): blocks spanning many pages, a split
    # shorter than one block, a window edge inside a block.
    case = random_gqa_case([300, 1, 129, 0], 8, 2, 64, page_size=4, dtype=dtype, device=device)
    sinks = torch.randn(8, device=device)
    for splits, window in ((1, -1), (5, -1), (3, 70)):
        plan = splitkv.plan_decode(4, 304, 8, page_size=4, dtype=dtype, device=device, kind="gqa",
                                   num_kv_heads=2, head_dim=64, num_splits=splits, block_n=128,
                                   window_left=window)  # fmt: skip
        run_and_check(case, plan=plan, sinks=sinks, window_left=window)


def test_zero_length_gives_zero_and_minus_inf(dtype, device):
    case = random_gqa_case([0, 9], 4, 2, 32, dtype=dtype, device=device)
    out, lse = run_and_check(case)
    assert torch.equal(out[0], torch.zeros_like(out[0])) and torch.isneginf(lse[0]).all()
    assert not torch.isnan(out).any()


def test_one_split_writes_the_output_itself(dtype, device):
    # One uniform split: stage 1 writes the rows (`whole_pieces`) and no merge runs; the same
    # rows as the merged path, with sinks, a window, an empty request, into a strided out, and
    # without the lse.
    case = random_gqa_case([150, 0, 37, 2], 8, 2, 64, qlen=2, page_size=8, dtype=dtype,
                           device=device)  # fmt: skip
    sinks = torch.randn(8, device=device)
    shape = dict(page_size=8, dtype=dtype, device=device, kind="gqa", num_kv_heads=2,
                 head_dim=64, num_splits=1, qlen=2)  # fmt: skip
    one = splitkv.plan_decode(4, 152, 8, **shape)
    merged = splitkv.plan_decode(4, 152, 8, whole_pieces=False, **shape)
    assert one.whole_pieces and not merge_follows(one) and merge_follows(merged)
    for window in (-1, 40):
        out, lse = run_and_check(case, plan=one, sinks=sinks, window_left=window)
        ref_out, ref_lse = splitkv.gqa_decode(*case.args, plan=merged, sinks=sinks,
                                              window_left=window)  # fmt: skip
        check_against_reference(out, lse, ref_out, ref_lse)
    wide = torch.full((4, 2, 8, 96), float("nan"), dtype=dtype, device=device)
    out, lse = splitkv.gqa_decode(*case.args, plan=one, out=wide[..., :64], return_lse=False)
    assert lse is None and torch.isnan(wide[..., 64:]).all()
    ref_out, _ = splitkv.reference.gqa_decode(*case.args)
    check_against_reference(out, None, ref_out, None)
    with pytest.raises(ValueError, match="whole_pieces"):
        splitkv.plan_decode(4, 152, 8, whole_pieces=True, **{**shape, "num_splits": 3})


@pytest.mark.parametrize(
    "q_heads,qlen,block_n,block_h",
    [(8, 8, 128, 32), (16, 8, 64, 64), (8, 2, 128, 16)],  # 64 rows: the half blocks; 16 rows
)
def test_one_split_on_the_long_split_tile_over_short_ragged_requests(
    q_heads, qlen, block_n, block_h, dtype, device
):
    # The one split `gqa_one_split_pays` picks takes the long-split tile however short the
    # requests (H200: 128-key blocks at head dim 64, 3 stages, page ids a block ahead; 64 at
    # 64 rows where they pad fewer keys): a kv head's rows over requests shorter than a block,
    # one of exactly one, one of just its queries, and an empty one.
    case = random_gqa_case([40, 128, 0, 300, qlen], q_heads, 2, 64, qlen=qlen, page_size=16,
                           dtype=dtype, device=device)  # fmt: skip
    sinks = torch.randn(q_heads, device=device)
    plan = splitkv.plan_decode(5, 304, q_heads, qlen=qlen, page_size=16, dtype=dtype,
                               device=device, kind="gqa", num_kv_heads=2, head_dim=64,
                               num_splits=1, block_n=block_n, num_stages=3,
                               page_prefetch=True)  # fmt: skip
    tallest = splitkv.DeviceSpec.from_torch(torch.device(device)).tunables.block_m  # CPU: 32
    assert plan.whole_pieces and plan.block_h == min(block_h, tallest)
    run_and_check(case, plan=plan, sinks=sinks)


@pytest.mark.parametrize("knobs", [{"num_splits": 3}, {"num_splits": 1, "whole_pieces": True},
                                   {"schedule": "balanced"}])  # fmt: skip
@pytest.mark.parametrize("head_dim", [64, 128])
def test_value_cache_laid_out_apart_from_the_keys(knobs, head_dim, dtype, device):
    # Stage 1 reads a key block's values at its keys' row offsets where the two caches share
    # strides (one tensor's two halves, as serving engines keep them: `KV_SAME_STRIDES`, on
    # one split and the balanced schedule at head dim 128); a value cache of another layout
    # (here its slots twice as far apart) takes its own.
    case = random_gqa_case([70, 2, 33, 0], 8, 2, head_dim, qlen=2, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(4, 80, 8, qlen=2, page_size=16, dtype=dtype, device=device,
                               kind="gqa", num_kv_heads=2, head_dim=head_dim,
                               **knobs)  # fmt: skip
    assert plan.whole_pieces == ("whole_pieces" in knobs)
    fused = torch.stack([case.k_cache, case.v_cache])  # [2, pages, page size, kv heads, dim]
    alike, alike_lse = run_and_check(
        dataclasses.replace(case, k_cache=fused[0], v_cache=fused[1]), plan=plan
    )
    wide = torch.full((*case.v_cache.shape[:-1], 2 * head_dim), float("nan"), dtype=dtype,
                      device=device)  # fmt: skip
    wide[..., :head_dim] = case.v_cache
    apart = dataclasses.replace(case, v_cache=wide[..., :head_dim])
    assert apart.v_cache.stride() != apart.k_cache.stride()
    out, lse = run_and_check(apart, plan=plan)
    check_against_reference(out, lse, alike, alike_lse)


def test_splits_orders_tilings_and_prefetch_agree(dtype, device):
    case = random_gqa_case([300, 129, 0, 64], 8, 2, 64, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    base = splitkv.plan_decode(4, 320, 8, page_size=16, dtype=dtype, device=device, kind="gqa",
                               num_kv_heads=2, head_dim=64, num_splits=1)  # fmt: skip
    one, one_lse = run_and_check(case, plan=base)
    variants = [
        {"num_splits": 7},
        {"num_splits": 4, "grid_order": "batch_major"},
        {"num_splits": 4, "merge_block_s": 1, "merge_d_split": 1},
        {"num_splits": 4, "page_prefetch": True, "num_stages": 3},
        {"num_splits": 3, "block_n": 128},  # the H200 default's key block at head dim 64
        {"num_splits": 4, "merge_rows": 4},  # a merge program folds 4 rows as one tile
        {"num_splits": 5, "merge_rows": 8, "merge_block_s": 16},  # 8 rows, small-tile path
        {"num_splits": 3, "merge_rows": 2, "merge_block_s": 2},  # the loop over 2-wide tiles
        {"num_splits": 4, "merge_rows": 2, "merge_d_split": 2},  # one slice writes the lse
    ]
    for knobs in variants:
        plan = splitkv.plan_decode(4, 320, 8, page_size=16, dtype=dtype, device=device,
                                   kind="gqa", num_kv_heads=2, head_dim=64, **knobs)  # fmt: skip
        out, lse = run_and_check(case, plan=plan)
        check_against_reference(out, lse, one, one_lse)
    split_major = dataclasses.replace(plan, grid_order="split_major", page_prefetch=False)
    batch_major = dataclasses.replace(split_major, grid_order="batch_major")
    a = splitkv.gqa_decode(*case.args, plan=split_major)
    b = splitkv.gqa_decode(*case.args, plan=batch_major)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_plan_replays_with_new_lengths(dtype, device):
    plan = splitkv.plan_decode(3, 128, 4, qlen=2, page_size=16, dtype=dtype, device=device,
                               kind="gqa", num_kv_heads=1, head_dim=64, num_splits=3)  # fmt: skip
    out = torch.empty(3, 2, 4, 64, dtype=dtype, device=device)
    for step, lengths in enumerate([[2, 100, 128], [50, 0, 7], [128, 128, 2]]):
        case = random_gqa_case(lengths, 4, 1, 64, qlen=2, dtype=dtype, device=device,
                               table_columns=8, seed=step)  # fmt: skip
        got, lse = splitkv.gqa_decode(*case.args, plan=plan, out=out)
        assert got is out
        check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args))


def test_corrupt_table_and_lengths_stay_in_bounds(dtype, device):
    case = random_gqa_case([40, 40, 40], 4, 2, 32, dtype=dtype, device=device)
    table = case.page_table.clone()
    table[0, 1] = 1 << 30
    table[1, 0] = -5
    lens = torch.tensor([40, 1 << 30, -7], dtype=torch.int32, device=device)
    _, lse = splitkv.gqa_decode(case.q, case.k_cache, case.v_cache, table, lens)
    assert torch.isneginf(lse[2]).all()

"""splitkv.mla_decode against the fp32 reference: page sizes, lengths on and off page and block
boundaries, MTP, odd head counts, empty and fully masked splits, both grid orders, both merge
tilings, NaN poisoned into every slot a request does not own."""

import dataclasses
import functools

import pytest
import torch

import splitkv
from splitkv.device import DeviceSpec
from splitkv.testing import check_against_reference, random_mla_case

PAGE_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def run_and_check(case, **kwargs):
    out, lse = splitkv.mla_decode(*case.args, validate=True, **kwargs)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference(out, lse, ref_out, ref_lse)
    return out, lse


def boundary_lengths(page_size: int, qlen: int) -> list[int]:
    """0, 1, page - 1, page, page + 1 (lengths under qlen raised to qlen: the query tokens
    are in the cache)."""
    lengths = [0, 1, page_size - 1, page_size, page_size + 1]
    return [n if n == 0 else max(n, qlen) for n in lengths]


@pytest.mark.parametrize("page_size", PAGE_SIZES)
def test_every_page_size_at_page_boundaries(page_size, dtype, device):
    qlen = 1 + PAGE_SIZES.index(page_size) % 4  # qlen 1..4 spread over the page sizes
    case = random_mla_case(
        [*boundary_lengths(page_size, qlen), 3 * page_size + 5],
        num_heads=5,
        qlen=qlen,
        page_size=page_size,
        dtype=dtype,
        device=device,
    )
    plan = splitkv.plan_decode(
        6,
        4 * page_size + 5,
        5,
        qlen=qlen,
        page_size=page_size,
        dtype=dtype,
        device=device,
        num_splits=3,
    )
    run_and_check(case, plan=plan)


@pytest.mark.parametrize("qlen", [1, 2, 3, 4, 8])
def test_mtp_causal_rows(qlen, dtype, device):
    case = random_mla_case(
        [qlen, 40, 97], num_heads=4, qlen=qlen, page_size=16, dtype=dtype, device=device
    )
    run_and_check(case)


def test_split_whose_rows_are_all_causally_masked(dtype, device):
    # 33 keys, 16-key blocks, 3 splits: [0, 16), [16, 32), [32, 33). With qlen 4, rows 0-2 see
    # keys up to 29..31, so the last split is fully masked for them (lse = -inf): it must add 0.
    case = random_mla_case([33], num_heads=3, qlen=4, page_size=8, dtype=dtype, device=device)
    plan = splitkv.plan_decode(
        1, 40, 3, qlen=4, page_size=8, dtype=dtype, device=device, num_splits=3, block_n=16
    )
    run_and_check(case, plan=plan)


@pytest.mark.parametrize("num_heads", [1, 3, 12, 20, 96])
def test_odd_head_counts(num_heads, dtype, device):
    lengths = [77] if num_heads > 64 else [77, 130]
    case = random_mla_case(lengths, num_heads=num_heads, page_size=32, dtype=dtype, device=device)
    run_and_check(case)


def test_more_splits_than_key_blocks(dtype, device):
    # 16 splits over at most 4 blocks: most splits are empty, write nothing and are never read.
    case = random_mla_case([1, 20, 64, 100], num_heads=4, page_size=16, dtype=dtype, device=device)
    plan = splitkv.plan_decode(4, 128, 4, page_size=16, dtype=dtype, device=device, num_splits=16)
    run_and_check(case, plan=plan)


def test_merge_streams_folds_flagged_splits_and_clears_the_flags(dtype, device):
    # merge_streams (kernels/split_flags.py): stage 1 raises a flag per split it wrote for each
    # merge program (2 column slices a row here), the merge folds the flagged partials and
    # clears its flags, so every call, new lengths included, starts from zero flags. Empty
    # splits (the short and the empty request's) raise none and are never waited for.
    case = random_mla_case([5, 300, 0, 129], num_heads=3, qlen=2, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(4, 320, 3, qlen=2, page_size=16, dtype=dtype, device=device,
                               num_splits=4, merge_d_split=2, merge_streams=True)  # fmt: skip
    flags = plan.workspace.split_flags
    assert flags.shape == (4, 6, 2, 4) and plan.merge_block_s >= plan.num_splits
    for lengths in ([5, 300, 0, 129], [5, 150, 0, 64]):  # shorter: the rest is NaN-poisoned
        case.seq_lens.copy_(torch.tensor(lengths))
        run_and_check(case, plan=plan)
        assert not flags.any()


@pytest.mark.parametrize("merge_block_s", [4, 64])
def test_merge_of_one_to_nine_partials(merge_block_s, dtype, device):
    # Rows with at most 8 partials merge them in one small tile, others in merge_block_s
    # tiles (kernels/merge.py): 1, 8 and 9 partials of 16-key splits, and an empty request.
    case = random_mla_case([16, 128, 144, 0], num_heads=4, page_size=16, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(4, 144, 4, page_size=16, dtype=dtype, device=device,
                               num_splits=9, block_n=16, merge_block_s=merge_block_s)  # fmt: skip
    run_and_check(case, plan=plan)


def test_one_split_equals_many(dtype, device):
    case = random_mla_case([300, 129], num_heads=6, page_size=32, dtype=dtype, device=device)
    plans = [
        splitkv.plan_decode(2, 320, 6, page_size=32, dtype=dtype, device=device, num_splits=n)
        for n in (1, 7)
    ]
    one, one_lse = run_and_check(case, plan=plans[0])
    many, many_lse = run_and_check(case, plan=plans[1])
    check_against_reference(many, many_lse, one, one_lse)


def test_grid_orders_are_bit_identical(dtype, device):
    case = random_mla_case([300, 129, 0, 64], num_heads=6, page_size=32, dtype=dtype, device=device)
    results = []
    for order in ("split_major", "batch_major"):
        plan = splitkv.plan_decode(
            4, 320, 6, page_size=32, dtype=dtype, device=device, num_splits=4, grid_order=order
        )
        results.append(run_and_check(case, plan=plan))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])


@pytest.mark.parametrize("block_s,d_split", [(1, 1), (4, 2), (8, 8), (16, 1)])
def test_merge_tilings(block_s, d_split, dtype, device):
    case = random_mla_case(
        [250, 90, 0], num_heads=3, qlen=2, page_size=16, dtype=dtype, device=device
    )
    plan = splitkv.plan_decode(
        3,
        256,
        3,
        qlen=2,
        page_size=16,
        dtype=dtype,
        device=device,
        num_splits=5,
        merge_block_s=block_s,
        merge_d_split=d_split,
    )
    out, lse = run_and_check(case, plan=plan)
    serial = splitkv.plan_decode(
        3,
        256,
        3,
        qlen=2,
        page_size=16,
        dtype=dtype,
        device=device,
        num_splits=5,
        merge_block_s=1,
        merge_d_split=1,
    )
    out_serial, lse_serial = splitkv.mla_decode(*case.args, plan=serial)
    check_against_reference(out, lse, out_serial, lse_serial)


def test_zero_length_requests_give_zero_and_minus_inf(dtype, device):
    case = random_mla_case(
        [0, 50, 0], num_heads=4, qlen=2, page_size=16, dtype=dtype, device=device
    )
    out, lse = run_and_check(case)
    assert not torch.isnan(out).any() and not torch.isnan(lse).any()
    for b in (0, 2):
        assert torch.equal(out[b], torch.zeros_like(out[b]))
        assert torch.isneginf(lse[b]).all()


def test_rows_without_keys_when_seq_len_below_qlen(dtype, device):
    # seq_len 2 with qlen 4 is refused by validate, but must still compute safely: rows 0 and 1
    # see no key (out 0, lse -inf), rows 2 and 3 see keys [0, 0] and [0, 1].
    case = random_mla_case([2], num_heads=2, qlen=4, page_size=4, dtype=dtype, device=device)
    out, lse = splitkv.mla_decode(*case.args)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    check_against_reference(out, lse, ref_out, ref_lse)
    assert torch.isneginf(lse[0, :2]).all() and torch.equal(
        out[0, :2], torch.zeros_like(out[0, :2])
    )


def test_four_dim_kv_cache_and_custom_scale(dtype, device):
    case = random_mla_case([70, 5], num_heads=4, page_size=8, dtype=dtype, device=device)
    kv4 = case.kv_cache.unsqueeze(2)
    out, lse = splitkv.mla_decode(case.q, kv4, case.page_table, case.seq_lens, scale=0.02)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args, scale=0.02)
    check_against_reference(out, lse, ref_out, ref_lse)


def test_writes_into_given_out_and_lse(dtype, device):
    case = random_mla_case([70, 5], num_heads=4, page_size=8, dtype=dtype, device=device)
    out = torch.full((2, 1, 4, 512), float("nan"), dtype=dtype, device=device)
    lse = torch.full((2, 1, 4), float("nan"), device=device)
    got_out, got_lse = splitkv.mla_decode(*case.args, out=out, lse=lse)
    assert got_out is out and got_lse is lse
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


def test_return_lse_false(dtype, device):
    case = random_mla_case([70, 5], num_heads=4, page_size=8, dtype=dtype, device=device)
    out, lse = splitkv.mla_decode(*case.args, return_lse=False)
    assert lse is None
    check_against_reference(out, None, *splitkv.reference.mla_decode(*case.args))


def test_strided_q_and_out(dtype, device):
    case = random_mla_case([70, 33], num_heads=4, qlen=2, page_size=8, dtype=dtype, device=device)
    q_wide = torch.randn(2, 4, 2, 600, device=device).to(dtype)  # [batch, heads, qlen, >576]
    q = q_wide[..., :576].transpose(1, 2)  # [batch, qlen, heads, 576], not contiguous
    out_wide = torch.empty(2, 2, 4, 640, dtype=dtype, device=device)
    out, _ = splitkv.mla_decode(
        q, case.kv_cache, case.page_table, case.seq_lens, out=out_wide[..., :512]
    )
    ref_out, _ = splitkv.reference.mla_decode(
        q.contiguous(), case.kv_cache, case.page_table, case.seq_lens
    )
    check_against_reference(out, None, ref_out, None)


def test_deterministic(dtype, device):
    case = random_mla_case([200, 31], num_heads=5, page_size=16, dtype=dtype, device=device)
    first = splitkv.mla_decode(*case.args)
    second = splitkv.mla_decode(*case.args)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])


def test_empty_batch(dtype, device):
    q = torch.randn(0, 1, 4, 576, device=device).to(dtype)
    kv = torch.randn(2, 16, 576, device=device).to(dtype)
    table = torch.zeros(0, 3, dtype=torch.int32, device=device)
    lens = torch.zeros(0, dtype=torch.int32, device=device)
    out, lse = splitkv.mla_decode(q, kv, table, lens)
    assert out.shape == (0, 1, 4, 512) and lse.shape == (0, 1, 4)


@pytest.mark.parametrize("head_dim_qk,head_dim_v", [(80, 64), (128, 128)])
def test_configurable_head_dims(head_dim_qk, head_dim_v, dtype, device):
    case = random_mla_case(
        [90, 17], num_heads=4, page_size=16, dtype=dtype, device=device, head_dim_qk=head_dim_qk
    )
    plan = splitkv.plan_decode(
        2,
        96,
        4,
        page_size=16,
        dtype=dtype,
        device=device,
        head_dim_qk=head_dim_qk,
        head_dim_v=head_dim_v,
    )
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args, plan=plan)
    assert out.shape[-1] == head_dim_v
    check_against_reference(out, lse, ref_out, ref_lse)


def test_corrupt_table_and_lengths_stay_in_bounds(dtype, device):
    # Without validate, bad page ids and lengths are clamped in the kernel: the rows they touch
    # are wrong, but nothing outside the tensors is read and the process survives.
    case = random_mla_case([40, 40, 40], num_heads=2, page_size=16, dtype=dtype, device=device)
    table = case.page_table.clone()
    table[0, 1] = 1 << 30
    table[1, 0] = -5
    lens = torch.tensor([40, 1 << 30, -7], dtype=torch.int32, device=device)
    out, lse = splitkv.mla_decode(case.q, case.kv_cache, table, lens)
    assert out.shape == (3, 1, 2, 512)
    assert torch.isneginf(lse[2]).all()  # a negative length is clamped to 0


@pytest.mark.parametrize("page_size,block_n", [(64, 32), (64, 64), (16, 32), (4, 16)])
@pytest.mark.parametrize("num_stages", [2, 3])
def test_page_prefetch_matches_reference(page_size, block_n, num_stages, dtype, device):
    # Page ids one block ahead, for pages as large as a block and smaller (the per-token
    # gather), with lengths ending inside a block, a split and a page.
    lengths = [3 * page_size + 5, 1, block_n + 1, 0, 2 * block_n]
    case = random_mla_case(lengths, 3, qlen=1, page_size=page_size, dtype=dtype, device=device)
    plan = splitkv.plan_decode(
        5, 4 * page_size + 2 * block_n, 3, page_size=page_size, dtype=dtype, device=device,
        num_splits=3, block_n=block_n, num_stages=num_stages, page_prefetch=True,
    )  # fmt: skip
    out, lse = run_and_check(case, plan=plan)
    plain = dataclasses.replace(plan, page_prefetch=False)
    check_against_reference(out, lse, *splitkv.mla_decode(*case.args, plan=plain))


@pytest.mark.parametrize(
    "lengths,heads,qlen,page_size,knobs",
    [
        ([250, 90, 0, 1], 12, 1, 16, {}),  # the 16-row tile of 12 heads, an empty request
        ([200, 65], 20, 3, 1, {"num_splits": 3}),  # two head blocks, MTP, one-token pages
        ([300, 129], 16, 1, 64, {"page_prefetch": True, "num_stages": 3}),
        ([130, 7, 64], 4, 2, 16, {"schedule": "balanced", "num_programs": 5}),
        ([180, 40], 12, 2, 16, {"num_splits": 2}),  # the 32-row tile of MTP
    ],
)
def test_two_latent_chains_match_the_reference(lengths, heads, qlen, page_size, knobs, dtype,
                                               device):  # fmt: skip
    # latent_chains=2 computes the score dot over the latent halves with separate
    # accumulators: the same attention, to rounding.
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=page_size, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * page_size, heads,
                               qlen=qlen, page_size=page_size, dtype=dtype, device=device,
                               latent_chains=2, **knobs)  # fmt: skip
    assert plan.latent_chains == 2
    run_and_check(case, plan=plan)


@pytest.mark.parametrize(
    "heads,qlen,knobs,chains",
    [
        (12, 1, {}, 2),  # 16-row uniform tile
        (16, 2, {}, 2),  # 32-row uniform tile
        (128, 1, {}, 1),  # 64-row wgmma tile: spills with two
        (16, 1, {"schedule": "balanced"}, 2),  # balanced tile with bulk copies (H200)
        # Without them: two chains and no page ids ahead (session 63; with page ids ahead two
        # chains spilled, 8% slower on the H200 at v0.2.4).
        (16, 1, {"schedule": "balanced", "kv_tma": False}, 2),
        (16, 1, {"schedule": "balanced", "kv_tma": False, "page_prefetch": True}, 1),
        (16, 1, {"latent_chains": 1}, 1),  # the caller's choice stands
    ],
)
def test_default_latent_chains(heads, qlen, knobs, chains):
    # The Triton tiles' choice (the Gluon kernels, the H200's default, take one chain).
    spec = DeviceSpec.preset("h200")
    plan = splitkv.plan_decode(8, 68096, heads, qlen=qlen, device="meta", device_spec=spec,
                               warp_specialized=False, **knobs)  # fmt: skip
    assert plan.latent_chains == chains
    gqa = splitkv.plan_decode(8, 4096, 32, kind="gqa", num_kv_heads=8, device="meta",
                              device_spec=spec)  # fmt: skip
    assert gqa.latent_chains == 1


@pytest.mark.parametrize(
    "lengths,heads,qlen,page_size,knobs",
    [
        ([300, 129, 64, 0, 5], 12, 1, 64, {}),  # whole blocks, partial tails, an empty request
        ([95, 33, 1], 16, 1, 32, {"page_prefetch": True, "num_stages": 3}),
        ([257, 31], 12, 2, 128, {"num_splits": 3}),  # MTP, the 32-row tile, 3 splits
    ],
)
def test_tma_key_blocks_match_the_reference(lengths, heads, qlen, page_size, knobs, dtype,
                                            device):  # fmt: skip
    # kv_tma: whole key blocks by bulk copies, the partial last block by masked loads. Slots
    # past each length hold NaN (random_mla_case), so a tail read by bulk copy would show.
    case = random_mla_case(lengths, heads, qlen=qlen, page_size=page_size, dtype=dtype,
                           device=device)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * page_size, heads,
                               qlen=qlen, page_size=page_size, dtype=dtype, device=device,
                               kv_tma=True, **knobs)  # fmt: skip
    assert plan.kv_tma and plan.latent_chains == 2
    run_and_check(case, plan=plan)


@pytest.mark.parametrize(
    "knobs",
    [
        {"kv_tma": True},
        {"kv_tma": True, "page_prefetch": True},
        {"kv_tma": True, "program_loop": True},  # one program walks its pieces
    ],
)
def test_balanced_pieces_by_bulk_copies(knobs, dtype, device):
    # The balanced kernel with bulk copies (two chains): pieces start on block boundaries
    # inside a request, so whole blocks take bulk copies and each piece's partial end masked
    # loads; NaN past each length, as above.
    lengths = [1, 63, 64, 65, 300, 0, 129]
    case = random_mla_case(lengths, 12, page_size=64, dtype=dtype, device=device)
    plan = splitkv.plan_decode(len(lengths), case.page_table.shape[1] * 64, 12, page_size=64,
                               dtype=dtype, device=device, schedule="balanced", num_programs=5,
                               latent_chains=2, **knobs)  # fmt: skip
    assert plan.kv_tma and plan.schedule == "balanced"
    run_and_check(case, plan=plan)


def test_tma_needs_what_a_bulk_copy_takes(dtype, device):
    plan = functools.partial(splitkv.plan_decode, 2, 512, 12, dtype=dtype, device=device)
    for knobs, message in (
        ({"kv_tma": 1}, r"^kv_tma: expected a bool"),
        ({"kv_tma": True, "latent_chains": 1}, r"^kv_tma: needs MLA"),
        ({"kv_tma": True, "schedule": "balanced", "latent_chains": 1}, r"^kv_tma: needs MLA"),
        ({"kv_tma": True, "page_size": 16, "block_n": 32}, r"^kv_tma: needs a page size that"),
        ({"kv_tma": True, "page_size": 48, "block_n": 32}, r"^kv_tma: needs a page size that"),
    ):
        with pytest.raises((ValueError, TypeError), match=message):
            plan(**knobs)
    with pytest.raises(ValueError, match=r"^kv_tma: needs MLA"):
        splitkv.plan_decode(2, 512, 8, kind="gqa", num_kv_heads=2, device=device, kv_tma=True)


def test_tma_plan_reads_a_strided_pool_by_masked_loads(dtype, device):
    # A pool view with a page stride of its own has no row descriptor: the TMA plan's call
    # reads it by masked loads instead, with the same result (and the plan stays usable).
    case = random_mla_case([100, 40], 12, page_size=64, dtype=dtype, device=device)
    padded = torch.full((case.kv_cache.shape[0], 65, 576), float("nan"), dtype=dtype,
                        device=device)  # fmt: skip
    padded[:, :64] = case.kv_cache
    strided = padded[:, :64]
    tma = splitkv.plan_decode(2, case.page_table.shape[1] * 64, 12, page_size=64, dtype=dtype,
                              device=device, kv_tma=True)  # fmt: skip
    expected = splitkv.reference.mla_decode(*case.args)
    for pool in (strided, case.kv_cache):
        out, lse = splitkv.mla_decode(case.q, pool, case.page_table, case.seq_lens, plan=tma)
        check_against_reference(out, lse, *expected)


def test_two_latent_chains_with_narrow_heads(dtype, device):
    case = random_mla_case([90, 33], 4, page_size=16, dtype=dtype, device=device, head_dim_qk=80)
    plan = splitkv.plan_decode(2, case.page_table.shape[1] * 16, 4, page_size=16, dtype=dtype,
                               device=device, head_dim_qk=80, head_dim_v=48,
                               latent_chains=2)  # fmt: skip
    out, lse = splitkv.mla_decode(*case.args, plan=plan)
    ref = splitkv.reference.mla_decode(*case.args, plan=plan)
    check_against_reference(out, lse, *ref)
    with pytest.raises(ValueError, match=r"^latent_chains"):
        splitkv.plan_decode(2, 256, 4, device=device, kind="gqa", latent_chains=2)
    with pytest.raises(ValueError, match=r"^latent_chains"):
        splitkv.plan_decode(2, 256, 4, device=device, latent_chains=3)

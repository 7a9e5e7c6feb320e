"""splitkv.merge_states: partial attention states merged in fp32, against a float64 formula and
against attention over the union of the key sets."""

import pytest
import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case


def reference_merge(outs, lses):
    lse = torch.logsumexp(lses.double(), 0)
    weights = torch.exp(lses.double() - lse).nan_to_num(0.0)  # all -inf: no weight
    finite = torch.isfinite(lses)[..., None]
    out = (weights[..., None] * torch.where(finite, outs.double(), 0.0)).sum(0)
    return out, lse


@pytest.mark.parametrize("num_states", [1, 2, 5, 37, 70])
@pytest.mark.parametrize("head_dim", [512, 100])
def test_matches_the_formula(num_states, head_dim, dtype, device):
    outs = torch.randn(num_states, 3, 4, head_dim, device=device).to(dtype)
    lses = torch.randn(num_states, 3, 4, device=device) * 3
    out, lse = splitkv.merge_states(outs, lses)
    want_out, want_lse = reference_merge(outs, lses)
    torch.testing.assert_close(lse.double(), want_lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.double(), want_out, rtol=2e-2, atol=2e-2)


def test_one_querys_states(dtype, device):
    # outs [S, D] and lses [S]: no row dimensions, so lse comes back 0-d (it raised an
    # IndexError in the stride check before; found by a fuzz).
    outs = torch.randn(3, 64, device=device).to(dtype)
    lses = torch.randn(3, device=device)
    for given in ((outs, lses), (list(outs), list(lses))):
        out, lse = splitkv.merge_states(*given)
        assert out.shape == (64,) and lse.shape == ()
        want_out, want_lse = reference_merge(outs, lses)
        torch.testing.assert_close(lse.double(), want_lse, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(out.double(), want_out, rtol=2e-2, atol=2e-2)
    out, lse = splitkv.merge_states(outs, torch.full((3,), float("-inf"), device=device))
    assert torch.equal(out, torch.zeros_like(out)) and torch.isneginf(lse)


def test_empty_states_contribute_nothing(dtype, device):
    outs = torch.randn(4, 6, 64, device=device).to(dtype)
    lses = torch.randn(4, 6, device=device)
    lses[1] = float("-inf")
    outs[1] = float("nan")  # a state that saw no keys may hold anything
    lses[:, 2] = float("-inf")  # a row no state saw
    out, lse = splitkv.merge_states(outs, lses)
    assert not torch.isnan(out).any()
    assert torch.equal(out[2], torch.zeros_like(out[2])) and torch.isneginf(lse[2])
    want_out, want_lse = reference_merge(outs, lses)
    torch.testing.assert_close(out.double(), want_out, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(lse.double(), want_lse, rtol=1e-5, atol=1e-5)


def test_sequence_input_and_given_outputs(dtype, device):
    parts = [torch.randn(5, 32, device=device).to(dtype) for _ in range(3)]
    part_lses = [torch.randn(5, device=device) for _ in range(3)]
    out = torch.full((5, 32), float("nan"), dtype=dtype, device=device)
    lse = torch.full((5,), float("nan"), device=device)
    got_out, got_lse = splitkv.merge_states(parts, part_lses, out=out, lse=lse)
    assert got_out is out and got_lse is lse
    want_out, _ = reference_merge(torch.stack(parts), torch.stack(part_lses))
    torch.testing.assert_close(out.double(), want_out, rtol=2e-2, atol=2e-2)


def test_merging_two_halves_of_the_keys_is_attention_over_all(dtype, device):
    # One request's keys split in two key sets (e.g. two GPUs): decode each, merge the states.
    whole = random_mla_case([300], 8, page_size=16, dtype=dtype, device=device)
    first_pages, n_first = 10, 160  # keys [0, 160) and [160, 300)
    table = whole.page_table
    parts = []
    for pages, length in ((table[:, :first_pages], n_first), (table[:, first_pages:], 140)):
        lens = torch.tensor([length], dtype=torch.int32, device=device)
        parts.append(splitkv.mla_decode(whole.q, whole.kv_cache, pages.contiguous(), lens))
    out, lse = splitkv.merge_states([p[0] for p in parts], [p[1] for p in parts])
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*whole.args))


@pytest.mark.parametrize(
    "outs,lses,argument",
    [
        (torch.randn(2, 3, 8), torch.randn(2, 4), "lses"),
        (torch.randn(2, 3, 8), torch.randn(2, 3).half(), "lses"),
        (torch.randn(2, 3, 8).int(), torch.randn(2, 3), "outs"),
        (torch.randn(0, 3, 8), torch.randn(0, 3), "outs"),
        (torch.randn(2, 3, 0), torch.randn(2, 3), "outs"),  # no columns: lse left unwritten
        ("states", torch.randn(2, 3), "outs"),
    ],
)
def test_bad_inputs_are_named(outs, lses, argument):
    with pytest.raises((TypeError, ValueError), match=rf"^{argument}: expected"):
        splitkv.merge_states(outs, lses)

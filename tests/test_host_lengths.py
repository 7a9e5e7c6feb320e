"""plan_decode's `seq_lens` hint, checked once a plan (splitkv/host_lengths.py): the batch
figures the rules read, the checks' messages, and the twins taking checked lengths as they are."""

import random

import pytest
import torch

import splitkv
from splitkv import plan as plan_module
from splitkv.host_lengths import HostLengths, as_host_lengths, host_lengths

H200 = splitkv.DeviceSpec.preset("h200")


@pytest.mark.parametrize("seed", range(4))
def test_figures_match_plain_python(seed):
    rng = random.Random(seed)
    lengths = [
        rng.choice([0, 1, 63, 64, 65, rng.randint(0, 70000)]) for _ in range(rng.randint(1, 300))
    ]
    checked = HostLengths(lengths)
    assert (checked.longest, checked.shortest, checked.total) == (
        max(lengths),
        min(lengths),
        sum(lengths),
    )
    for block_n in (1, 16, 32, 64, 100, 128):
        assert checked.key_blocks(block_n) == sum((n + block_n - 1) // block_n for n in lengths)
        assert checked.key_blocks(block_n) == sum(
            (n + block_n - 1) // block_n for n in lengths
        )  # remembered
    cut = rng.randint(1, 70000)
    assert list(checked.clipped(cut)) == [min(n, cut) for n in lengths]
    assert checked.clipped(checked.longest) is checked


def test_no_lengths():
    empty = host_lengths(None, 4, 100)
    assert not empty and (empty.longest, empty.shortest, empty.total) == (0, 0, 0)
    assert not empty.all_equal and empty.key_blocks(64) == 0


def test_equal_lengths():
    assert HostLengths([7, 7, 7]).all_equal and not HostLengths([7, 8]).all_equal


def test_as_host_lengths_keeps_checked_lengths():
    checked = HostLengths([5, 9])
    assert as_host_lengths(checked) is checked
    assert as_host_lengths([5, 9]) == checked


def test_a_tensor_is_read_once():
    lengths = host_lengths(torch.tensor([3, 0, 17]), 3, 20)
    assert lengths == (3, 0, 17) and all(type(n) is int for n in lengths)


@pytest.mark.parametrize(
    "seq_lens, error, message",
    [
        ([1, 2, 3, 4], ValueError, r"^seq_lens: expected at most batch_size=3 lengths"),
        ([1, -1], ValueError, r"^seq_lens: expected an int in \[0, 100\], got -1"),
        ([1, 101], ValueError, r"^seq_lens: expected an int in \[0, 100\], got 101"),
        ([1, 2.0], TypeError, r"^seq_lens: expected an int, got float"),
        ([True], TypeError, r"^seq_lens: expected an int, got bool"),
        ("12", TypeError, r"^seq_lens: expected a sequence of ints, got str"),
        (torch.tensor([1.0]), TypeError, r"^seq_lens: expected a 1-D integer tensor"),
        (HostLengths([1, 101]), ValueError, r"^seq_lens: expected an int in \[0, 100\], got 101"),
        (HostLengths([1, 2, 3, 4]), ValueError, r"^seq_lens: expected at most batch_size=3"),
        (HostLengths([1, 2.5]), TypeError, r"^seq_lens: expected an int, got float"),  # not checked
    ],
)
def test_bad_lengths_are_named(seq_lens, error, message):
    with pytest.raises(error, match=message):
        host_lengths(seq_lens, 3, 100)


def test_the_twins_take_the_checked_lengths(monkeypatch):
    """gpt-oss's default pack plans two twins from the checked lengths: one check in all."""
    seen = []
    real = plan_module.host_lengths

    def recorded(seq_lens, *args):
        made = real(seq_lens, *args)
        seen.append((seq_lens, made))
        return made

    monkeypatch.setattr(plan_module, "host_lengths", recorded)
    lengths = [random.Random(1).randint(100, 30000) for _ in range(64)]
    splitkv.plan_decode(64, 32768, 64, kind="gqa", num_kv_heads=8, head_dim=64, seq_lens=lengths,
                        device="meta", device_spec=H200, dtype=torch.bfloat16)  # fmt: skip
    assert len(seen) == 3  # the call and its two twins
    checked = seen[0][1]
    assert seen[0][0] is lengths and all(
        given is checked and made is checked for given, made in seen[1:]
    )


def test_checked_lengths_are_checked_again_past_their_bounds():
    checked = host_lengths([1, 500], 3, 1000)
    assert checked.checked and host_lengths(checked, 3, 1000) is checked
    with pytest.raises(ValueError, match=r"^seq_lens: expected an int in \[0, 100\], got 500"):
        host_lengths(checked, 3, 100)
    with pytest.raises(ValueError, match=r"^seq_lens: expected at most batch_size=1"):
        host_lengths(checked, 1, 1000)

"""`plan_decode`'s `seq_lens` hint as checked host ints, with the batch figures its rules read
(the longest, the shortest, the total, key blocks a block size) computed once a plan.

Each rule used to pass the lengths itself (its own `max`, `min` and block sums, and three
checks where the default GQA pack plans two twins): gpt-oss planned 1,024 lengths in ~620 us,
~270 us once they were read once here (docs/perf.md session 78). The twins take the checked
lengths as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from splitkv.checks import check_int


class HostLengths(tuple):
    """Request lengths (host ints) with their longest, shortest and total; empty where no
    lengths were given (longest = shortest = total = 0). Checked only where `host_lengths`
    made them (`checked`).

    >>> lengths = HostLengths([100, 3000, 70])
    >>> lengths.longest, lengths.shortest, lengths.total, lengths.key_blocks(64)
    (3000, 70, 3170, 51)
    """

    longest: int
    shortest: int
    total: int
    checked: bool  # made by `host_lengths`: every length an int within its plan's bounds

    def __new__(cls, lengths: Iterable[int] = ()) -> HostLengths:
        self = super().__new__(cls, lengths)
        self.longest = max(self) if self else 0
        self.shortest = min(self) if self else 0
        self.total = sum(self)
        self.checked = False
        self._blocks: dict[int, int] = {}
        return self

    @property
    def all_equal(self) -> bool:
        """Given and all the same length."""
        return bool(self) and self.shortest == self.longest

    def key_blocks(self, block_n: int) -> int:
        """Blocks of `block_n` keys the requests read in all (each request's rounded up),
        remembered a block size: a plan and its twins ask for the same sizes again."""
        blocks = self._blocks.get(block_n)
        if blocks is None:
            round_up = block_n - 1  # (a comprehension: map forms timed slower)
            blocks = sum([(n + round_up) // block_n for n in self])
            self._blocks[block_n] = blocks
        return blocks

    def clipped(self, keys: int) -> HostLengths:
        """The lengths past `keys` cut to it (a window: a request reads the keys it can see)."""
        return self if self.longest <= keys else HostLengths([min(n, keys) for n in self])


def as_host_lengths(lengths: Sequence[int]) -> HostLengths:
    """`lengths` as HostLengths (themselves where they are already), for rules also called
    with plain lists (their doctests, the tests)."""
    return lengths if isinstance(lengths, HostLengths) else HostLengths(lengths)


def host_lengths(seq_lens, batch_size: int, max_seq_len: int) -> HostLengths:
    """plan_decode's `seq_lens` hint as host ints, checked (lengths this function checked
    already, as a plan passes its twins, are taken as they are where they fit these bounds)."""
    if seq_lens is None:
        return HostLengths()
    if isinstance(seq_lens, HostLengths):
        if seq_lens.checked and len(seq_lens) <= batch_size and seq_lens.longest <= max_seq_len:
            return seq_lens
        seq_lens = tuple(seq_lens)  # checked below, for the message
    if isinstance(seq_lens, torch.Tensor):
        if seq_lens.dim() != 1 or seq_lens.dtype.is_floating_point or seq_lens.is_complex():
            raise TypeError("seq_lens: expected a 1-D integer tensor or a sequence of ints")
        seq_lens = seq_lens.tolist()
    if isinstance(seq_lens, (str, bytes)) or not isinstance(seq_lens, Sequence):
        raise TypeError(f"seq_lens: expected a sequence of ints, got {type(seq_lens).__name__}")
    if len(seq_lens) > batch_size:
        raise ValueError(f"seq_lens: expected at most batch_size={batch_size} lengths")
    # Plain ints in bounds pass at C speed (a plan of 1,024 lengths spent ~40% of its host
    # time checking them one by one); anything else is checked one by one for its message.
    if not set(map(type, seq_lens)) <= {int}:
        for n in seq_lens:
            check_int("seq_lens", n, 0, max_seq_len)
    lengths = HostLengths(seq_lens)
    if lengths.shortest < 0 or lengths.longest > max_seq_len:
        for n in lengths:
            check_int("seq_lens", n, 0, max_seq_len)
    lengths.checked = True
    return lengths

"""Where each split's keys start and end: one definition, used by both stages.

Stage 1 writes a partial only for a split that has keys; stage 2 reads only those partials. Both
derive the split bounds from the same request length with this one function, so the merge never
reads a slot stage 1 left untouched.
"""

import triton
import triton.language as tl


@triton.jit
def split_and_request(pid, num_splits, batch, SPLIT_MAJOR: tl.constexpr):
    """(split, request) of a uniform-schedule program, pid taken modulo num_splits * batch.
    Split-major: consecutive program ids are the splits of one request (DESIGN.md); either
    order only relabels which program computes which (request, split)."""
    if SPLIT_MAJOR:
        split = pid % num_splits
        request = (pid // num_splits) % batch
    else:
        request = pid % batch
        split = (pid // batch) % num_splits
    return split, request


@triton.jit
def clamped_seq_len(seq_lens_ptr, request, max_seq_len):
    """The request's length, clamped into [0, max_seq_len] so a corrupt length reads nothing
    outside the request's page-table row."""
    seq_len = tl.load(seq_lens_ptr + request)
    return tl.minimum(tl.maximum(seq_len, 0), max_seq_len)


@triton.jit
def keys_per_split(seq_len, num_splits, BLOCK_N: tl.constexpr):
    """Keys per split, whole key blocks so every split starts on a block (and page) boundary.

    Never 0, so `tl.cdiv(seq_len, keys_per_split)` (the number of non-empty splits) is defined
    for seq_len = 0 too.
    """
    per_split = tl.cdiv(tl.cdiv(seq_len, num_splits), BLOCK_N) * BLOCK_N
    return tl.maximum(per_split, BLOCK_N)


@triton.jit
def first_visible_key(seq_len, window_left, QLEN: tl.constexpr, BLOCK_N: tl.constexpr):
    """The first key any query row of the request can see, rounded down to a key block: with a
    sliding window of `window_left` keys (query position i sees keys
    [last_i - window_left, last_i], last_i = seq_len - qlen + i), keys before it are never read.
    """
    first = tl.maximum(seq_len - QLEN - window_left, 0)
    return (first // BLOCK_N) * BLOCK_N

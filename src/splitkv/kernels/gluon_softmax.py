"""The online-softmax step of the 64-row Gluon consumers, whose wgmma rows are query rows
(`attend_key_blocks` in kernels/mla_warp_specialized.py and the alternating pair in
kernels/mla_alternate_blocks.py): each row's key bounds, and one key block's masked base-2
probabilities against the running maximum."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def row_key_bounds(head_block, hi_key, last_key, NUM_HEADS: gl.constexpr,
                   BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                   layout: gl.constexpr):  # fmt: skip
    """For the scores' `layout`: the head block's rows, the key each row stops before (row r,
    query position q_pos, sees keys below min(hi_key, last_key + q_pos + 1)), where blocks start
    to need a mask, and a block's columns."""
    rows = gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    q_pos = (head_block * BLOCK_M + rows) // NUM_HEADS
    row_limit = gl.minimum(hi_key, last_key + q_pos + 1)  # keys past it are masked
    unmasked_end = gl.minimum(hi_key, last_key + 1)  # blocks ending here need no mask
    cols = gl.arange(0, BLOCK_N, gl.SliceLayout(0, layout))
    return rows, row_limit, unmasked_end, cols


@gluon.jit
def block_probabilities(scores, m_i, block_key, cols, lo_key, row_limit, unmasked_end,
                        scale_log2, BLOCK_N: gl.constexpr):  # fmt: skip
    """One block's raw scores (keys from block_key) to base-2 probabilities against the new
    running maximum: returns (p, m_new, m_safe), m_safe being what p was taken against. Keys
    outside [lo_key, row_limit) weigh 0; only blocks that reach past a bound pay for the
    mask."""
    scores = scores * scale_log2
    if (block_key < lo_key) | (block_key + BLOCK_N > unmasked_end):
        keys = block_key + cols
        visible = (keys[None, :] >= lo_key) & (keys[None, :] < row_limit[:, None])
        scores = gl.where(visible, scores, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(scores, 1))
    # A row with nothing visible yet keeps m = -inf: subtract 0 there, not -inf (no NaN).
    m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
    return gl.exp2(scores - m_safe[:, None]), m_new, m_safe

"""The online-softmax pieces shared by the stage-1 kernels (base-2 logits, fp32 state)."""

import triton
import triton.language as tl

LN2 = tl.constexpr(0.6931471805599453)  # lse leaves the kernels in natural log
LOG2E = tl.constexpr(1.4426950408889634)  # natural-log inputs (lse, sinks, logits) to base 2


@triton.jit
def softmax_weights(m_i, l_i, scores):
    """One key block's softmax weights against the running state: (new max, new sum, the
    factor that rescales the running output, the block's weights p).

    scores [BLOCK_H, BLOCK_N]: base-2 logits, -inf where masked.
    """
    m_new = tl.maximum(m_i, tl.max(scores, 1))
    # A row with nothing visible yet keeps m = -inf; subtract 0 there instead of -inf so exp2
    # gives 0, not NaN.
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(scores - m_safe[:, None])
    return m_new, l_i * alpha + tl.sum(p, 1), alpha, p


@triton.jit
def softmax_step(m_i, l_i, acc, scores, values):
    """Fold one key block into the running (max, sum, unnormalised output); values
    [BLOCK_N, BLOCK_D]."""
    m_new, l_i, alpha, p = softmax_weights(m_i, l_i, scores)
    acc = acc * alpha[:, None] + tl.dot(p.to(values.dtype), values)
    return m_new, l_i, acc


@triton.jit
def store_partial(
    partial_o_ptr, partial_lse_ptr, slot, row_ok, m_i, l_i, acc, d, d_ok, HEAD_DIM_V: tl.constexpr
):
    """Write one split's partial: normalised output and base-2 lse; rows that saw no key get
    out 0 and lse -inf, so the merge weighs them exactly 0."""
    out, lse = normalized_state(m_i, l_i, acc)
    write_partial(partial_o_ptr, partial_lse_ptr, slot, row_ok, out, lse, d, d_ok, HEAD_DIM_V)


@triton.jit
def write_partial(
    partial_o_ptr, partial_lse_ptr, slot, row_ok, out, lse, d, d_ok, HEAD_DIM_V: tl.constexpr
):
    """Store normalised rows (`normalized_state`) as partials for the merge."""
    tl.store(partial_lse_ptr + slot, lse, mask=row_ok)
    tl.store(
        partial_o_ptr + slot[:, None] * HEAD_DIM_V + d[None, :],
        out,
        mask=row_ok[:, None] & d_ok[None, :],
    )


@triton.jit
def state_weights(m_i, lse_s):
    """Fold a tile of partial states' base-2 lse into the running max. Returns (new max, the
    factor that rescales the running sums, each state's weight); a state with lse = -inf
    weighs exactly 0, and while nothing is seen the max stays -inf without NaN."""
    m_new = tl.maximum(m_i, tl.max(lse_s, 0))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    return m_new, tl.exp2(m_i - m_safe), tl.exp2(lse_s - m_safe)


@triton.jit
def fold_states(acc, l_i, alpha, weight, o_s):
    """Add a tile of weighted partial outputs [states, columns] to the running sums.

    A state of weight 0 must hold a finite output (0 * NaN is NaN): stage 1 writes zeros to
    the slots of its empty programs (`kernels/balanced.mark_empty`) and `merge_states` never
    loads the outputs of states without keys. No select here, so each multiply and add fuse:
    the merge's fold loop is ~40% fewer instructions (docs/perf.md, v0.2.14)."""
    return acc * alpha + tl.sum(weight[:, None] * o_s, 0), l_i * alpha + tl.sum(weight, 0)


@triton.jit
def row_state_weights(m_i, lse_s):
    """`state_weights` for a tile of rows: m_i [ROWS], lse_s [ROWS, states]."""
    m_new = tl.maximum(m_i, tl.max(lse_s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    return m_new, tl.exp2(m_i - m_safe), tl.exp2(lse_s - m_safe[:, None])


@triton.jit
def row_fold_states(acc, l_i, alpha, weight, o_s):
    """`fold_states` for a tile of rows: acc [ROWS, columns], weight [ROWS, states], o_s
    [ROWS, states, columns]."""
    folded = tl.sum(weight[:, :, None] * o_s, 1)
    return acc * alpha[:, None] + folded, l_i * alpha + tl.sum(weight, 1)


@triton.jit
def merged_output(acc, l_i):
    """The normalised output of merged states; 0 where no state had keys."""
    has_keys = l_i > 0.0
    return tl.where(has_keys, acc / tl.where(has_keys, l_i, 1.0), 0.0)


@triton.jit
def merged_lse(m_i, l_i):
    """The natural-log lse of merged states; -inf where no state had keys."""
    has_keys = l_i > 0.0
    return tl.where(has_keys, (m_i + tl.log2(tl.where(has_keys, l_i, 1.0))) * LN2, float("-inf"))


@triton.jit
def sink_weights(m_i, l_i, sink):
    """Fold a sink (gpt-oss: one more base-2 logit in a row's softmax denominator, with no
    value) into the running state. Returns (new max, new sum, the factor that rescales the
    output accumulator)."""
    m_new = tl.maximum(m_i, sink)
    alpha = tl.exp2(m_i - m_new)
    return m_new, l_i * alpha + tl.exp2(sink - m_new), alpha


@triton.jit
def normalized_state(m_i, l_i, acc):
    """Rows' (normalised output, base-2 lse) from a running state; rows that saw no key get
    0 and -inf."""
    has_keys = l_i > 0.0
    out = tl.where(has_keys[:, None], acc / tl.where(has_keys, l_i, 1.0)[:, None], 0.0)
    lse = tl.where(has_keys, m_i + tl.log2(tl.where(has_keys, l_i, 1.0)), float("-inf"))
    return out, lse


@triton.jit
def output_rows(out_rows, lse_rows, sink_rows, row_ok, lse_ok, m_i, l_i, acc, d, d_ok,
                WRITE_LSE: tl.constexpr, HAS_SINKS: tl.constexpr):  # fmt: skip
    """Rows' final output from their running state, as the merge writes it: the sink folded
    into the softmax (HAS_SINKS; `sink_rows` natural-log logits), the output normalised in
    out's dtype (0 where no key was seen) at `out_rows` + d under row_ok and, WRITE_LSE, the
    natural-log lse (-inf there) at `lse_rows` under lse_ok. The GQA stage 1 of one split
    writes its rows with it (no merge follows: at thousands of rows the merge was 6-41 us of
    a 60-185 us call; H200, docs/perf.md session 37), and so does `merge_rows_kernel`."""
    if HAS_SINKS:
        sink = tl.load(sink_rows, mask=row_ok, other=0.0) * LOG2E
        m_i, l_i, alpha = sink_weights(m_i, l_i, sink)
        acc = acc * alpha[:, None]
    out, lse = normalized_state(m_i, l_i, acc)
    tl.store(out_rows[:, None] + d[None, :], out.to(out_rows.dtype.element_ty),
             mask=row_ok[:, None] & d_ok[None, :])  # fmt: skip
    if WRITE_LSE:
        tl.store(lse_rows, lse * LN2, mask=lse_ok)

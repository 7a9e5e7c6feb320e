"""Merging attention states computed over different key sets (or on different GPUs):
`out = sum_s exp(lse_s - lse) * out_s`, `lse = logsumexp_s(lse_s)`, in fp32.

States are stacked: out_s [S, rows, D] and lse_s [S, rows] (natural log, any strides). A state
with lse = -inf (it saw no keys) contributes exactly 0, whatever its out holds.
"""

import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def merge_states_kernel(
    outs_ptr,
    lses_ptr,
    out_ptr,
    lse_ptr,
    num_states,
    num_rows,
    stride_os,
    stride_or,
    stride_ls,
    stride_lr,
    stride_out_row,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_S: tl.constexpr,
    WRITE_LSE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    offs_s = tl.arange(0, BLOCK_S)
    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.zeros([1], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for s0 in range(0, num_states, BLOCK_S):
        states = (s0 + offs_s).to(tl.int64)
        s_ok = states < num_states
        lse_s = (
            tl.load(
                lses_ptr + states * stride_ls + row * stride_lr, mask=s_ok, other=float("-inf")
            ).to(tl.float32)
            * LOG2E
        )
        m_new = tl.maximum(m_i, tl.max(lse_s, 0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        weight = tl.exp2(lse_s - m_safe)
        o_s = tl.load(
            outs_ptr + states[:, None] * stride_os + row * stride_or + offs_d[None, :],
            mask=s_ok[:, None] & d_ok[None, :] & (weight[:, None] > 0.0),
            other=0.0,
        ).to(tl.float32)
        acc = acc * alpha + tl.sum(weight[:, None] * o_s, 0)
        l_i = l_i * alpha + tl.sum(weight, 0)
        m_i = m_new
    has_keys = l_i > 0.0
    result = tl.where(has_keys, acc / tl.where(has_keys, l_i, 1.0), 0.0)
    tl.store(
        out_ptr + row * stride_out_row + offs_d, result.to(out_ptr.dtype.element_ty), mask=d_ok
    )
    if WRITE_LSE:  # noqa: SIM102 (the first if is compile-time)
        if tl.program_id(1) == 0:
            lse = tl.where(
                has_keys, (m_i + tl.log2(tl.where(has_keys, l_i, 1.0))) * LN2, float("-inf")
            )
            tl.store(lse_ptr + row + tl.arange(0, 1), lse)

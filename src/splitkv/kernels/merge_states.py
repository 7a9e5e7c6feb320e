"""Merging attention states computed over different key sets (or on different GPUs):
`out = sum_s exp(lse_s - lse) * out_s`, `lse = logsumexp_s(lse_s)`, in fp32.

States are stacked: out_s [S, rows, D] and lse_s [S, rows] (natural log, any strides). A state
with lse = -inf (it saw no keys) contributes exactly 0, whatever its out holds.
"""

import triton
import triton.language as tl

from splitkv.kernels.online_softmax import (
    LOG2E,
    fold_states,
    merged_lse,
    merged_output,
    state_weights,
)


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
        m_i, alpha, weight = state_weights(m_i, lse_s)
        # States without keys are not even read: their outputs may hold anything.
        o_s = tl.load(
            outs_ptr + states[:, None] * stride_os + row * stride_or + offs_d[None, :],
            mask=s_ok[:, None] & d_ok[None, :] & (weight[:, None] > 0.0),
            other=0.0,
        ).to(tl.float32)
        acc, l_i = fold_states(acc, l_i, alpha, weight, o_s)
    result = merged_output(acc, l_i)
    tl.store(
        out_ptr + row * stride_out_row + offs_d, result.to(out_ptr.dtype.element_ty), mask=d_ok
    )
    if WRITE_LSE:  # noqa: SIM102 (the first if is compile-time)
        if tl.program_id(1) == 0:
            tl.store(lse_ptr + row + tl.arange(0, 1), merged_lse(m_i, l_i))

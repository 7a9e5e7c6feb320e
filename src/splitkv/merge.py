"""`splitkv.merge_states`: combine attention states computed over different key sets."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from splitkv.checks import KV_DTYPES, check_shape, check_tensor
from splitkv.device import on_device
from splitkv.kernels.merge_states import merge_states_kernel
from splitkv.plan_rules import next_pow2

MAX_BLOCK_D = 128  # columns one program merges; wider heads get more programs
MAX_BLOCK_S = 64  # states merged per iteration


def merge_states(
    outs: torch.Tensor | Sequence[torch.Tensor],
    lses: torch.Tensor | Sequence[torch.Tensor],
    *,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge S partial attention states of the same queries into one, in fp32 math.

    Each state is what an attention over one key set returns (splitkv's `(out, lse)`, or a peer
    converted to the natural-log convention): over different KV ranges, cache tiers or GPUs.
    `lse = logsumexp_s(lse_s)`, `out = sum_s exp(lse_s - lse) * out_s`; a state with
    lse_s = -inf (no keys) contributes exactly 0, and if all are -inf, out = 0 and lse = -inf.

    Args:
        outs: [S, ..., D] (or a sequence of S tensors [..., D]) bfloat16, float16 or float32.
        lses: [S, ...] float32 (or a sequence of S tensors [...]), natural log.
        out: [..., D] in outs' dtype, contiguous, written in place when given.
        lse: [...] float32, contiguous, written in place when given.

    Returns:
        (out [..., D] in outs' dtype, lse [...] float32).

    Stacked inputs and given outputs make the call allocation-free (CUDA-graph capturable).

    >>> import torch, splitkv
    >>> dev = "cuda" if torch.cuda.is_available() else "cpu"
    >>> outs, lses = torch.randn(3, 2, 4, 64, device=dev), torch.randn(3, 2, 4, device=dev)
    >>> out, lse = splitkv.merge_states(outs, lses)
    >>> out.shape, lse.shape
    (torch.Size([2, 4, 64]), torch.Size([2, 4]))
    """
    outs, lses = _stacked("outs", outs), _stacked("lses", lses)
    outs = check_tensor("outs", outs, ndim=tuple(range(2, 9)), dtypes=KV_DTYPES)
    lses = check_tensor(
        "lses", lses, ndim=outs.dim() - 1, dtypes=(torch.float32,), device=outs.device
    )
    check_shape("lses", lses, tuple(outs.shape[:-1]))
    num_states, head_dim = outs.shape[0], outs.shape[-1]
    if num_states < 1:
        raise ValueError("outs: expected at least one state, got 0")
    if head_dim < 1:  # else lse's rows would come back unwritten
        raise ValueError(
            f"outs: expected a last dimension of at least 1, got shape {tuple(outs.shape)}"
        )
    row_shape = tuple(outs.shape[1:-1])
    if out is None:
        out = outs.new_empty((*row_shape, head_dim))
    out = check_tensor("out", out, ndim=outs.dim() - 1, dtypes=(outs.dtype,), device=outs.device)
    check_shape("out", out, (*row_shape, head_dim))
    if lse is None:
        lse = torch.empty(row_shape, dtype=torch.float32, device=outs.device)
    lse = check_tensor("lse", lse, ndim=lses.dim() - 1, dtypes=(torch.float32,), device=outs.device)
    check_shape("lse", lse, row_shape)
    for name, tensor in (("out", out), ("lse", lse)):
        if not tensor.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous tensor, got strides {tensor.stride()}")

    rows = out.numel() // head_dim
    if rows == 0:
        return out, lse
    # [S, rows, D] and [S, rows] views; reshape copies only for inputs it cannot view.
    states = outs.reshape(num_states, rows, head_dim)
    weights = lses.reshape(num_states, rows)
    block_d = min(MAX_BLOCK_D, next_pow2(head_dim))
    grid = (rows, -(-head_dim // block_d))
    with on_device(out.device):
        merge_states_kernel[grid](
            states,
            weights,
            out,
            lse,
            num_states,
            rows,
            states.stride(0),
            states.stride(1),
            weights.stride(0),
            weights.stride(1),
            head_dim,
            HEAD_DIM=head_dim,
            BLOCK_D=block_d,
            BLOCK_S=min(MAX_BLOCK_S, next_pow2(num_states)),
            WRITE_LSE=True,
        )
    return out, lse


def _stacked(name: str, states: object) -> object:
    """A list or tuple of per-state tensors stacked into one; anything else as it came."""
    if isinstance(states, (list, tuple)) and states:
        if not all(isinstance(t, torch.Tensor) for t in states):
            raise TypeError(f"{name}: expected tensors, got {[type(t).__name__ for t in states]}")
        shapes = {tuple(t.shape) for t in states}
        if len(shapes) > 1:
            raise ValueError(f"{name}: expected states of one shape, got {sorted(shapes)}")
        return torch.stack(list(states))
    return states

"""Input checks: every bad argument raises before anything is launched.

Shape, dtype and device checks read only tensor metadata (no device sync). The checks of device
data (page ids, lengths) sync, so they run only when asked (`validate=True`).
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

import torch

KV_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# Any page size up to this: powers of two as vLLM and SGLang use, and the others that vLLM gives
# hybrid models' attention layers (pages sized to their state: 528, 1,056 keys and the like).
MAX_PAGE_SIZE = 16384
MAX_KEYS = 2**31 - 1  # seq_lens are int32: a table row never needs to hold more keys


def check_int(name: str, value: object, low: int, high: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name}: expected an int {bounds}, got {value}")


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")


def check_pow2(name: str, value: int) -> None:
    if value < 1 or value & (value - 1):
        raise ValueError(f"{name}: expected a power of two, got {value}")


def check_tensor(
    name: str,
    value: object,
    *,
    ndim: int | tuple[int, ...],
    dtypes: tuple[torch.dtype, ...],
    device: torch.device | None = None,
) -> torch.Tensor:
    """A tensor of one of `ndim` ranks and `dtypes`, on `device`, with unit stride last (a
    0-d tensor, one value, has no last dimension to check). Runs on every call outside CUDA
    graphs, so each fact is read off the tensor once."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    rank = value.dim()
    if rank != ndim and (isinstance(ndim, int) or rank not in ndim):
        want = " or ".join(str(r) for r in ((ndim,) if isinstance(ndim, int) else ndim))
        raise ValueError(f"{name}: expected {want} dimensions, got shape {tuple(value.shape)}")
    if value.dtype not in dtypes:
        want = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
        raise TypeError(f"{name}: expected dtype {want}, got {value.dtype}")
    if device is not None and value.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} (where q is), got {value.device}")
    if rank and value.stride(-1) != 1 and value.numel():
        raise ValueError(
            f"{name}: expected unit stride in the last dimension, got {value.stride()}"
        )
    return value


def check_shape(name: str, value: torch.Tensor, expected: tuple[int, ...]) -> None:
    if value.shape != expected:  # a torch.Size is a tuple
        raise ValueError(f"{name}: expected shape {tuple(expected)}, got {tuple(value.shape)}")


def check_scale(scale: object, head_dim_qk: int) -> float:
    """The softmax scale: a positive finite number; None means head_dim_qk ** -0.5."""
    if scale is None:
        return head_dim_qk**-0.5
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scale: expected a float or None, got {type(scale).__name__}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale: expected a finite number > 0, got {scale}")
    return float(scale)


class MlaCall(NamedTuple):
    """The facts a launch needs, read off checked arguments (a named tuple: built on every call,
    at a third of a frozen dataclass's cost)."""

    kv_cache: torch.Tensor  # [num_pages, page_size, d_qk], a view of the caller's cache
    batch: int
    qlen: int
    num_heads: int
    page_size: int
    scale: float


def check_mla_call(
    q: object,
    kv_cache: object,
    page_table: object,
    seq_lens: object,
    *,
    scale: object,
    out: object,
    lse: object,
    head_dim_qk: int,
    head_dim_v: int,
    max_heads: int,
    max_qlen: int,
    allow_cpu: bool = False,
) -> MlaCall:
    """Check every argument of an MLA decode call; raise on the first bad one.

    allow_cpu: CPU tensors are fine without Triton's interpreter (the torch reference).
    """
    q = _check_query(q, max_heads=max_heads, max_qlen=max_qlen, allow_cpu=allow_cpu)
    batch, qlen, num_heads, d_qk = q.shape
    if d_qk != head_dim_qk:
        raise ValueError(f"q: expected head dim {head_dim_qk} (last dimension), got {d_qk}")
    kv_cache = _check_cache("kv_cache", kv_cache, q, ndim=(3, 4))
    if kv_cache.dim() == 4:
        if kv_cache.shape[2] != 1:
            raise ValueError(
                "kv_cache: expected [num_pages, page_size, 1, d_qk] (one latent head), "
                f"got shape {tuple(kv_cache.shape)}"
            )
        kv_cache = kv_cache.squeeze(2)
    if kv_cache.shape[2] != head_dim_qk:
        raise ValueError(f"kv_cache: expected head dim {head_dim_qk}, got {kv_cache.shape[2]}")
    _check_table_and_lengths(page_table, seq_lens, batch, q.device, kv_cache.shape[1])
    checked_scale = check_scale(scale, head_dim_qk)
    _check_outputs(out, lse, q, (batch, qlen, num_heads, head_dim_v))
    return MlaCall(kv_cache, batch, qlen, num_heads, kv_cache.shape[1], checked_scale)


class GqaCall(NamedTuple):
    """The facts a GQA launch needs, read off checked arguments (a named tuple, as MlaCall)."""

    batch: int
    qlen: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    page_size: int
    num_pages: int
    scale: float
    window_left: int
    logit_cap: float


MAX_GQA_HEAD_DIM = 256  # one head row per tile; wider heads would not fit the registers


def check_gqa_call(
    q: object,
    k_cache: object,
    v_cache: object,
    page_table: object,
    seq_lens: object,
    *,
    scale: object,
    out: object,
    lse: object,
    window_left: object,
    logit_cap: object,
    sinks: object,
    max_heads: int,
    max_qlen: int,
    allow_cpu: bool = False,
) -> GqaCall:
    """Check every argument of a GQA/MHA decode call; raise on the first bad one."""
    q = _check_query(q, max_heads=max_heads, max_qlen=max_qlen, allow_cpu=allow_cpu)
    batch, qlen, num_q_heads, head_dim = q.shape
    if head_dim % 16 or not 16 <= head_dim <= MAX_GQA_HEAD_DIM:
        raise ValueError(
            f"q: expected a head dim (last dimension) that is a multiple of 16 in "
            f"[16, {MAX_GQA_HEAD_DIM}], got {head_dim}"
        )
    k_cache = _check_cache("k_cache", k_cache, q, ndim=4)
    v_cache = _check_cache("v_cache", v_cache, q, ndim=4)
    num_pages, page_size, num_kv_heads, k_dim = k_cache.shape
    if k_dim != head_dim:
        raise ValueError(f"k_cache: expected q's head dim {head_dim}, got {k_dim}")
    if num_q_heads % num_kv_heads:
        raise ValueError(
            f"k_cache: expected a kv head count (dimension 2) dividing q's {num_q_heads} "
            f"heads, got {num_kv_heads}"
        )
    check_shape("v_cache", v_cache, k_cache.shape)
    _check_table_and_lengths(page_table, seq_lens, batch, q.device, page_size)
    checked_scale = check_scale(scale, head_dim)
    check_int("window_left", window_left, -1)
    if isinstance(logit_cap, bool) or not isinstance(logit_cap, (int, float)):
        raise TypeError(f"logit_cap: expected a float, got {type(logit_cap).__name__}")
    if not math.isfinite(logit_cap) or logit_cap < 0:
        raise ValueError(f"logit_cap: expected a finite number >= 0 (0: off), got {logit_cap}")
    if sinks is not None:
        sinks = check_tensor("sinks", sinks, ndim=1, dtypes=(torch.float32,), device=q.device)
        check_shape("sinks", sinks, (num_q_heads,))
    _check_outputs(out, lse, q, (batch, qlen, num_q_heads, head_dim))
    return GqaCall(
        batch=batch,
        qlen=qlen,
        num_q_heads=num_q_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        page_size=page_size,
        num_pages=num_pages,
        scale=checked_scale,
        window_left=window_left,
        logit_cap=float(logit_cap),
    )


def _check_query(q: object, *, max_heads: int, max_qlen: int, allow_cpu: bool) -> torch.Tensor:
    q = check_tensor("q", q, ndim=4, dtypes=KV_DTYPES)
    _check_backend(q.device, allow_cpu)
    _, qlen, num_heads, _ = q.shape
    if not 1 <= qlen <= max_qlen:
        raise ValueError(f"q: expected qlen (dimension 1) in [1, {max_qlen}], got {qlen}")
    if not 1 <= num_heads <= max_heads:
        raise ValueError(
            f"q: expected num_heads (dimension 2) in [1, {max_heads}], got {num_heads}"
        )
    return q


def _check_cache(
    name: str, cache: object, q: torch.Tensor, *, ndim: int | tuple[int, ...]
) -> torch.Tensor:
    """A paged cache in q's dtype and device with at least one page of at most MAX_PAGE_SIZE
    keys."""
    cache = check_tensor(name, cache, ndim=ndim, dtypes=KV_DTYPES, device=q.device)
    if cache.dtype != q.dtype:
        raise TypeError(f"{name}: expected q's dtype {q.dtype}, got {cache.dtype}")
    num_pages, page_size = cache.shape[:2]
    if num_pages < 1:
        raise ValueError(f"{name}: expected at least one page, got 0")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(
            f"{name}: expected a page size (dimension 1) in [1, {MAX_PAGE_SIZE}], got {page_size}"
        )
    return cache


def _check_table_and_lengths(
    page_table: object, seq_lens: object, batch: int, device: torch.device, page_size: int
) -> None:
    page_table = check_tensor(
        "page_table", page_table, ndim=2, dtypes=(torch.int32,), device=device
    )
    if page_table.shape[0] != batch:
        raise ValueError(
            f"page_table: expected {batch} rows (q's batch), got shape {tuple(page_table.shape)}"
        )
    if page_table.shape[1] < 1:
        raise ValueError("page_table: expected at least one page per request, got 0 columns")
    if page_table.shape[1] * page_size > MAX_KEYS:
        # The kernels count a row's keys (columns x page size) in int32.
        raise ValueError(
            f"page_table: expected at most {MAX_KEYS // page_size} columns at page size "
            f"{page_size} (2^31 - 1 keys a request), got {page_table.shape[1]}"
        )
    seq_lens = check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=device)
    check_shape("seq_lens", seq_lens, (batch,))


def _check_outputs(
    out: object, lse: object, q: torch.Tensor, out_shape: tuple[int, int, int, int]
) -> None:
    if out is not None:
        out = check_tensor("out", out, ndim=4, dtypes=(q.dtype,), device=q.device)
        check_shape("out", out, out_shape)
    if lse is not None:
        lse = check_tensor("lse", lse, ndim=3, dtypes=(torch.float32,), device=q.device)
        check_shape("lse", lse, out_shape[:3])


def check_plan_fits(plan, *, batch: int, **call) -> None:
    """The call must match the plan it runs under (`call`: the plan's fields as the call has
    them, e.g. kind, dtype, num_heads, qlen, page_size), with no more requests than planned."""
    for name, got in call.items():
        planned = getattr(plan, name)
        if got != planned:
            raise ValueError(
                f"plan: expected a plan for the call's {name}={got}, got one for {name}={planned}"
            )
    if batch > plan.batch_size:
        raise ValueError(
            f"plan: expected a plan for at least q's {batch} requests, got one for "
            f"{plan.batch_size}"
        )


def validate_decode_data(
    page_table: torch.Tensor, seq_lens: torch.Tensor, *, num_pages: int, page_size: int, qlen: int
) -> None:
    """Check the device data of a call (syncs with the device): lengths within the page table,
    every non-zero length at least qlen, and every page id a request uses inside the pool."""
    capacity = page_table.shape[1] * page_size
    lens = seq_lens.to(torch.int64)
    bad = (lens < 0) | (lens > capacity)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"seq_lens: expected values in [0, {capacity}] (page_table columns x page size), "
            f"got seq_lens[{i}] = {int(lens[i])}"
        )
    short = (lens > 0) & (lens < qlen)
    if bool(short.any()):
        i = int(short.nonzero()[0, 0])
        raise ValueError(
            f"seq_lens: expected 0 or at least qlen={qlen} (the query tokens are in the cache), "
            f"got seq_lens[{i}] = {int(lens[i])}"
        )
    pages_used = (lens + page_size - 1) // page_size
    columns = torch.arange(page_table.shape[1], device=page_table.device)
    used = columns[None, :] < pages_used[:, None]
    out_of_pool = used & ((page_table < 0) | (page_table >= num_pages))
    if bool(out_of_pool.any()):
        b, col = (int(x) for x in out_of_pool.nonzero()[0])
        raise ValueError(
            f"page_table: expected page ids in [0, {num_pages}) for the pages a request uses, "
            f"got page_table[{b}, {col}] = {int(page_table[b, col])}"
        )


def rows_describable(kv: torch.Tensor, page_size: int) -> bool:
    """The KV pool can be described for bulk copies (TMA) as rows [num_pages * page_size, d]:
    page-contiguous rows of unit stride, 16-byte aligned (a strided view is not)."""
    row = kv.stride(1)
    contiguous_rows = kv.stride(-1) == 1 and kv.stride(0) == page_size * row
    return contiguous_rows and (row * kv.element_size()) % 16 == 0 and kv.data_ptr() % 16 == 0


def interpreter_active() -> bool:
    """Triton's interpreter runs the kernels on the CPU (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _check_backend(device: torch.device, allow_cpu: bool) -> None:
    if device.type == "cpu" and not (allow_cpu or interpreter_active()):
        raise ValueError(
            "q: expected a CUDA or ROCm tensor; CPU tensors run only under Triton's "
            "interpreter (TRITON_INTERPRET=1 before splitkv is imported)"
        )
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"q: expected a CUDA or ROCm tensor, got device {device}")

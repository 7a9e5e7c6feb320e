"""The fp32 reference: gather each request's pages, then softmax and matmul, one request at a time.

It shares no code with the kernels (no split, no online softmax, no page-id clamping), so a bug
in the kernels' indexing cannot hide in it. Same signatures as `splitkv.mla_decode` and
`splitkv.gqa_decode`.
"""

from __future__ import annotations

import torch

from splitkv.checks import check_gqa_call, check_mla_call, validate_decode_data
from splitkv.plan import (
    MAX_GQA_HEADS,
    MAX_HEADS,
    MAX_QLEN,
    MLA_HEAD_DIM_QK,
    MLA_HEAD_DIM_V,
    DecodePlan,
)


def mla_decode(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    *,
    scale: float | None = None,
    plan: DecodePlan | None = None,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    return_lse: bool = True,
    validate: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """MLA decode in float32 math; `plan` only supplies head dims. Runs on any device."""
    head_dim_qk = plan.head_dim_qk if plan is not None else MLA_HEAD_DIM_QK
    head_dim_v = plan.head_dim_v if plan is not None else MLA_HEAD_DIM_V
    call = _check(q, kv_cache, page_table, seq_lens, scale, out, lse, head_dim_qk, head_dim_v)
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.kv_cache.shape[0],
            page_size=call.page_size,
            qlen=call.qlen,
        )
    batch, qlen, heads = call.batch, call.qlen, call.num_heads
    out_f32 = torch.zeros((batch, qlen, heads, head_dim_v), dtype=torch.float32, device=q.device)
    lse_f32 = torch.full((batch, qlen, heads), float("-inf"), dtype=torch.float32, device=q.device)
    lengths = seq_lens.tolist()
    for b in range(batch):
        n = lengths[b]
        if n <= 0:
            continue
        pages = page_table[b, : -(-n // call.page_size)].long()
        keys = call.kv_cache[pages].reshape(-1, head_dim_qk)[:n].float()  # [n, d_qk]
        values = keys[:, :head_dim_v]
        logits = torch.einsum("qhd,nd->qhn", q[b].float(), keys) * call.scale
        # Query position i sees keys [0, n - qlen + i].
        last_key = n - qlen + torch.arange(qlen, device=q.device)
        visible = torch.arange(n, device=q.device)[None, :] <= last_key[:, None]  # [qlen, n]
        logits = logits.masked_fill(~visible[:, None, :], float("-inf"))
        row_lse = torch.logsumexp(logits, dim=-1)  # [qlen, heads]
        has_keys = visible.any(dim=-1)[:, None].expand(qlen, heads)
        probs = torch.exp(logits - row_lse[..., None]).nan_to_num(0.0)
        out_f32[b] = torch.einsum("qhn,nd->qhd", probs, values) * has_keys[..., None]
        lse_f32[b] = torch.where(has_keys, row_lse, float("-inf"))

    return _finish(out_f32, lse_f32, q.dtype, out, lse, return_lse)


def gqa_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    *,
    scale: float | None = None,
    plan: DecodePlan | None = None,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    return_lse: bool = True,
    validate: bool = False,
    window_left: int = -1,
    logit_cap: float = 0.0,
    sinks: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """GQA/MHA decode in float32 math, same signature as `splitkv.gqa_decode` (`plan` unused)."""
    call = check_gqa_call(
        q,
        k_cache,
        v_cache,
        page_table,
        seq_lens,
        scale=scale,
        out=out,
        lse=lse,
        window_left=window_left,
        logit_cap=logit_cap,
        sinks=sinks,
        max_heads=MAX_GQA_HEADS,
        max_qlen=MAX_QLEN,
        allow_cpu=True,
    )
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.num_pages,
            page_size=call.page_size,
            qlen=call.qlen,
        )
    batch, qlen, heads, dim = call.batch, call.qlen, call.num_q_heads, call.head_dim
    group = heads // call.num_kv_heads
    out_f32 = torch.zeros((batch, qlen, heads, dim), dtype=torch.float32, device=q.device)
    lse_f32 = torch.full((batch, qlen, heads), float("-inf"), dtype=torch.float32, device=q.device)
    sink_logits = None if sinks is None else sinks.float()[None, :, None].expand(qlen, heads, 1)
    for b, n in enumerate(seq_lens.tolist()):
        n = max(n, 0)
        pages = page_table[b, : -(-n // call.page_size)].long()
        # [n, kv_heads, d] -> one copy per query head of the group: [n, q_heads, d]
        keys = k_cache[pages].reshape(-1, call.num_kv_heads, dim)[:n].float()
        values = v_cache[pages].reshape(-1, call.num_kv_heads, dim)[:n].float()
        keys = keys.repeat_interleave(group, dim=1)
        values = values.repeat_interleave(group, dim=1)
        logits = torch.einsum("qhd,nhd->qhn", q[b].float(), keys) * call.scale
        if call.logit_cap > 0:
            logits = call.logit_cap * torch.tanh(logits / call.logit_cap)
        last_key = n - qlen + torch.arange(qlen, device=q.device)  # query position i
        positions = torch.arange(n, device=q.device)
        visible = positions[None, :] <= last_key[:, None]
        if call.window_left >= 0:
            visible &= positions[None, :] >= last_key[:, None] - call.window_left
        logits = logits.masked_fill(~visible[:, None, :], float("-inf"))
        terms = logits if sink_logits is None else torch.cat([logits, sink_logits], dim=-1)
        row_lse = torch.logsumexp(terms, dim=-1)  # [qlen, heads]; -inf where nothing is seen
        probs = torch.exp(logits - row_lse[..., None]).nan_to_num(0.0)
        out_f32[b] = torch.einsum("qhn,nhd->qhd", probs, values)
        lse_f32[b] = row_lse
    return _finish(out_f32, lse_f32, q.dtype, out, lse, return_lse)


def _finish(out_f32, lse_f32, dtype, out, lse, return_lse):
    """Cast to the call's dtype and write into the caller's buffers where given."""
    result = out_f32.to(dtype)
    if out is not None:
        out.copy_(result)
        result = out
    if not return_lse:
        return result, None
    if lse is not None:
        lse.copy_(lse_f32)
        return result, lse
    return result, lse_f32


def _check(q, kv_cache, page_table, seq_lens, scale, out, lse, head_dim_qk, head_dim_v):
    return check_mla_call(
        q,
        kv_cache,
        page_table,
        seq_lens,
        scale=scale,
        out=out,
        lse=lse,
        head_dim_qk=head_dim_qk,
        head_dim_v=head_dim_v,
        max_heads=MAX_HEADS,
        max_qlen=MAX_QLEN,
        allow_cpu=True,
    )

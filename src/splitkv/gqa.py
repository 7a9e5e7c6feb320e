"""GQA/MHA/MQA decode, the public entry point: check, plan (unless given a plan), launch stage 1
and the merge shared with MLA."""

from __future__ import annotations

import torch

from splitkv.checks import GqaCall, check_gqa_call, validate_decode_data
from splitkv.device import DeviceSpec, on_device
from splitkv.gqa_tile_rules import gqa_kv_offsets_shared
from splitkv.kernels.gqa_split import gqa_balanced_kernel, gqa_split_kernel
from splitkv.mla import lse_args, merge_follows, merge_workspace
from splitkv.plan import MAX_GQA_HEADS, MAX_QLEN, DecodePlan, allocate_outputs, plan_for_call
from splitkv.plan_rules import next_pow2


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
    """Split-KV paged decode attention for GQA, MHA and MQA (NHD caches, as vLLM/FlashInfer).

    Query head h reads kv head h // (q_heads // kv_heads). Query position i of request b
    attends causally to keys [0, seq_lens[b] - qlen + i] of its paged cache.

    Args:
        q: [batch, qlen, q_heads, head_dim] bfloat16 or float16 (float32 for testing); q_heads
            up to 1,024, qlen 1 to 8, head_dim a multiple of 16 up to 256 (64, 128, 256 ...).
        k_cache, v_cache: [num_pages, page_size, kv_heads, head_dim], q's dtype, kv_heads
            dividing q_heads; page_size any from 1 to 16,384.
        page_table: [batch, max_pages] int32 page ids into the caches.
        seq_lens: [batch] int32 keys per request, including the qlen new tokens; 0 gives
            out = 0 and lse = -inf (or the sink's logit, with sinks).
        scale: softmax scale, default head_dim ** -0.5.
        plan: from `plan_decode(..., kind="gqa", num_kv_heads=..., head_dim=...)`; with a plan
            the call allocates nothing but `out`/`lse` when not given and never syncs.
        out: [batch, qlen, q_heads, head_dim] in q's dtype, written in place when given.
        lse: [batch, qlen, q_heads] float32, written in place when given.
        return_lse: when False, None is returned for the log-sum-exp.
        validate: also check page ids and lengths on the device (syncs).
        window_left: sliding window: query position p sees keys [p - window_left, p]; -1 off.
        logit_cap: soft cap of the scaled logits, cap * tanh(logit / cap) (Gemma, Grok); 0 off.
        sinks: [q_heads] float32 attention-sink logits (gpt-oss): one more term exp(sink) in
            each row's softmax denominator, with no value. The returned lse includes it.

    Returns:
        (out, lse): out [batch, qlen, q_heads, head_dim] in q's dtype; lse [batch, qlen,
        q_heads] float32, natural-log log-sum-exp of the (capped) scaled logits (or None).

    >>> import torch, splitkv
    >>> dev = "cuda" if torch.cuda.is_available() else "cpu"
    >>> dt = torch.bfloat16 if dev == "cuda" else torch.float16
    >>> q = torch.randn(2, 1, 8, 128, dtype=dt, device=dev)
    >>> k = torch.randn(8, 16, 2, 128, dtype=dt, device=dev)
    >>> v = torch.randn(8, 16, 2, 128, dtype=dt, device=dev)
    >>> table = torch.arange(8, dtype=torch.int32, device=dev).view(2, 4)
    >>> lens = torch.tensor([50, 7], dtype=torch.int32, device=dev)
    >>> out, lse = splitkv.gqa_decode(q, k, v, table, lens)
    >>> out.shape, lse.shape
    (torch.Size([2, 1, 8, 128]), torch.Size([2, 1, 8]))
    """
    if plan is not None and not isinstance(plan, DecodePlan):
        raise TypeError(f"plan: expected a DecodePlan from plan_decode, got {type(plan).__name__}")
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
    )
    plan = plan_for_call(
        plan,
        q,
        batch=call.batch,
        max_seq_len=page_table.shape[1] * call.page_size,
        num_heads=call.num_q_heads,
        qlen=call.qlen,
        page_size=call.page_size,
        kind="gqa",
        num_kv_heads=call.num_kv_heads,
        head_dim=call.head_dim,
        window_left=window_left,
    )
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.num_pages,
            page_size=call.page_size,
            qlen=call.qlen,
        )
    return decode_checked(plan, call, q, (k_cache, v_cache), page_table, seq_lens, sinks,
                          out, lse, return_lse)  # fmt: skip


def decode_checked(
    plan: DecodePlan,
    call: GqaCall,
    q: torch.Tensor,
    caches: tuple[torch.Tensor, torch.Tensor],
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sinks: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    return_lse: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`gqa_decode` after its checks: outputs allocated where not given, both stages launched.
    For arguments checked already: `gqa_decode`'s, or the shared-prefix cascade's passes,
    which it builds from a checked call on plans it made for them."""
    out, lse = allocate_outputs(
        q, out, lse, (call.batch, call.qlen, call.num_q_heads, call.head_dim), return_lse
    )
    if call.batch > 0:
        _launch(plan, call, q, *caches, page_table, seq_lens, sinks, out, lse)
    return out, lse


def gqa_stage_one(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    *,
    plan: DecodePlan,
    out: torch.Tensor,
    lse: torch.Tensor | None,
    sinks: torch.Tensor | None = None,
) -> None:
    """Stage 1 of `gqa_decode` alone (no window, no cap), its partials left in the plan's
    workspace: the benchmarks time it beside the whole call (see `splitkv.mla.mla_stage_one`)."""
    call = check_gqa_call(
        q,
        k_cache,
        v_cache,
        page_table,
        seq_lens,
        scale=None,
        out=out,
        lse=lse,
        window_left=-1,
        logit_cap=0.0,
        sinks=sinks,
        max_heads=MAX_GQA_HEADS,
        max_qlen=MAX_QLEN,
    )
    if call.batch > 0:
        _launch(plan, call, q, k_cache, v_cache, page_table, seq_lens, sinks, out, lse, False)


def _launch(
    plan: DecodePlan,
    call: GqaCall,
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    sinks: torch.Tensor | None,
    out: torch.Tensor,
    lse: torch.Tensor | None,
    merge: bool = True,
) -> None:
    ws = plan.workspace
    per_program = plan.programs_a_split  # the plan's kv heads are the call's (plan_for_call)
    if plan.schedule == "balanced":
        # One program per partial slot (kernels/balanced.py).
        kernel, grid = gqa_balanced_kernel, (plan.num_programs + call.batch) * per_program
        schedule_args = (plan.num_programs,)
        schedule_consts = {"BLOCK_B": plan.block_b, "piece_ranges_ptr": ws.piece_ranges}
    else:
        kernel, grid = gqa_split_kernel, plan.num_splits * call.batch * per_program
        schedule_args = (plan.num_splits,)
        schedule_consts = {"SPLIT_MAJOR": plan.grid_order == "split_major"}
    writes_output = not merge_follows(plan)  # one split (`whole_pieces`): no merge follows
    if writes_output:
        schedule_consts |= one_split_output_args(out, lse, sinks)
    merge = merge and not writes_output
    # A key block's values read at its keys' row offsets (one tensor's two halves share them).
    k_strides, v_strides = k_cache.stride()[:3], v_cache.stride()[:3]
    shared_offsets = k_strides == v_strides and gqa_kv_offsets_shared(
        plan.schedule == "balanced", plan.tile_head_dim, plan.block_h, writes_output, grid,
        DeviceSpec.from_torch(q.device).compute_units,
    )  # fmt: skip
    with on_device(q.device):
        kernel[(grid,)](
            q,
            k_cache,
            v_cache,
            page_table,
            seq_lens,
            ws.partial_o,
            ws.partial_lse,
            call.scale,
            call.logit_cap or 1.0,
            max(call.window_left, 0),
            call.batch,
            call.num_pages,
            page_table.shape[1],
            *schedule_args,
            *q.stride()[:3],
            *k_strides,
            *v_strides,
            page_table.stride(0),
            NUM_Q_HEADS=call.num_q_heads,
            NUM_KV_HEADS=call.num_kv_heads,
            QLEN=call.qlen,
            HEAD_DIM=call.head_dim,
            BLOCK_D=next_pow2(call.head_dim),
            PAGE_SIZE=call.page_size,
            BLOCK_H=plan.block_h,
            BLOCK_N=plan.block_n,
            PREFETCH_PAGE=plan.page_prefetch,
            HAS_WINDOW=call.window_left >= 0,
            HAS_CAP=call.logit_cap > 0,
            RELEASE_MERGE=plan.dependent_launch and merge,
            KV_SAME_STRIDES=shared_offsets,
            KV_PACK=plan.kv_pack,
            num_warps=plan.split_num_warps,
            num_stages=plan.split_num_stages,
            **schedule_consts,
        )
    if not merge:
        return
    merge_workspace(
        plan,
        seq_lens,
        out,
        lse,
        max_seq_len=page_table.shape[1] * call.page_size,
        window_left=call.window_left,
        sinks=sinks,
    )


def one_split_output_args(out: torch.Tensor, lse: torch.Tensor | None,
                          sinks: torch.Tensor | None) -> dict:  # fmt: skip
    """`gqa_split_kernel`'s arguments for writing the output itself (ONE_SPLIT_OUTPUT); the
    pointers of what the call lacks are stand-ins its flags keep it from reading or writing."""
    lse_arg, lse_strides = lse_args(lse, out)
    return {
        "out_ptr": out,
        "lse_ptr": lse_arg,
        "sinks_ptr": sinks if sinks is not None else lse_arg,
        "stride_out_batch": out.stride(0),
        "stride_out_pos": out.stride(1),
        "stride_out_head": out.stride(2),
        "stride_lse_batch": lse_strides[0],
        "stride_lse_pos": lse_strides[1],
        "stride_lse_head": lse_strides[2],
        "ONE_SPLIT_OUTPUT": True,
        "WRITE_LSE": lse is not None,
        "HAS_SINKS": sinks is not None,
    }

"""MLA decode, the public entry point: check, plan (unless given a plan), launch both stages."""

from __future__ import annotations

import torch
from triton.tools.tensor_descriptor import TensorDescriptor

from splitkv import warp_specialized
from splitkv.checks import MlaCall, check_mla_call, rows_describable, validate_decode_data
from splitkv.device import on_device
from splitkv.kernels.merge import merge_splits_kernel
from splitkv.kernels.merge_by_length import merge_by_length_kernel
from splitkv.kernels.merge_rows import merge_rows_kernel
from splitkv.kernels.mla_split import mla_balanced_kernel, mla_split_kernel
from splitkv.plan import (
    MAX_HEADS,
    MAX_QLEN,
    MLA_HEAD_DIM_QK,
    MLA_HEAD_DIM_V,
    DecodePlan,
    allocate_outputs,
    plan_for_call,
)
from splitkv.plan_rules import next_pow2

LOG2_E = 1.4426950408889634


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
    """Split-KV paged decode attention for absorbed MLA (DeepSeek-V3, Kimi-K2/K3).

    Query position i of request b attends causally to keys [0, seq_lens[b] - qlen + i] of its
    paged cache; values are the first d_v columns of the same rows.

    Args:
        q: [batch, qlen, heads, d_qk] bfloat16 or float16 (float32 for testing); qlen 1 to 8,
            heads 1 to 128, d_qk 576 (or the plan's head_dim_qk).
        kv_cache: [num_pages, page_size, d_qk] or [num_pages, page_size, 1, d_qk], q's dtype;
            page_size any from 1 to 16,384.
        page_table: [batch, max_pages] int32 page ids into kv_cache.
        seq_lens: [batch] int32 keys per request, including the qlen new tokens; 0 gives
            out = 0 and lse = -inf for that request.
        scale: softmax scale, default d_qk ** -0.5.
        plan: from `plan_decode`; with a plan the call allocates nothing but `out`/`lse` when
            they are not given, and never syncs, so it can be captured in a CUDA graph.
        out: [batch, qlen, heads, d_v] in q's dtype, written in place when given.
        lse: [batch, qlen, heads] float32, written in place when given.
        return_lse: when False, the log-sum-exp is not computed and None is returned for it.
        validate: also check page ids and lengths on the device (syncs; for tests and debugging).

    Returns:
        (out, lse): out [batch, qlen, heads, d_v] in q's dtype; lse [batch, qlen, heads]
        float32, the natural-log log-sum-exp of the scaled logits (or None).

    >>> import torch, splitkv
    >>> dev = "cuda" if torch.cuda.is_available() else "cpu"
    >>> dt = torch.bfloat16 if dev == "cuda" else torch.float16
    >>> q = torch.randn(2, 1, 16, 576, dtype=dt, device=dev)
    >>> kv = torch.randn(8, 64, 576, dtype=dt, device=dev)
    >>> table = torch.arange(8, dtype=torch.int32, device=dev).view(2, 4)
    >>> lens = torch.tensor([200, 17], dtype=torch.int32, device=dev)
    >>> out, lse = splitkv.mla_decode(q, kv, table, lens)
    >>> out.shape, lse.shape
    (torch.Size([2, 1, 16, 512]), torch.Size([2, 1, 16]))
    """
    if plan is not None and not isinstance(plan, DecodePlan):
        raise TypeError(f"plan: expected a DecodePlan from plan_decode, got {type(plan).__name__}")
    call = _check_call(q, kv_cache, page_table, seq_lens, scale, out, lse, plan)
    plan = plan_for_call(
        plan,
        q,
        batch=call.batch,
        max_seq_len=page_table.shape[1] * call.page_size,
        num_heads=call.num_heads,
        qlen=call.qlen,
        page_size=call.page_size,
        kind="mla",
    )
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.kv_cache.shape[0],
            page_size=call.page_size,
            qlen=call.qlen,
        )
    return decode_checked(plan, q, call, page_table, seq_lens, out, lse, return_lse)


def decode_checked(
    plan: DecodePlan,
    q: torch.Tensor,
    call: MlaCall,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    return_lse: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`mla_decode` after its checks: outputs allocated where not given, both stages launched.
    For arguments checked already: `mla_decode`'s, or the shared-prefix cascade's passes,
    which it builds from a checked call on plans it made for them."""
    out, lse = allocate_outputs(
        q, out, lse, (call.batch, call.qlen, call.num_heads, plan.head_dim_v), return_lse
    )
    if call.batch > 0:
        _launch(plan, q, call, page_table, seq_lens, out, lse)
    return out, lse


def mla_stage_one(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    *,
    plan: DecodePlan,
    out: torch.Tensor,
    lse: torch.Tensor | None,
) -> None:
    """Stage 1 of `mla_decode` alone, its partials left in the plan's workspace: the benchmarks
    time it beside the whole call, so the merge's added cost shows (stage 2 overlaps stage 1's
    tail). out / lse: the call's outputs, checked as `mla_decode` checks them."""
    call = _check_call(q, kv_cache, page_table, seq_lens, None, out, lse, plan)
    if call.batch > 0:
        _launch(plan, q, call, page_table, seq_lens, out, lse, merge=False)


def _check_call(q, kv_cache, page_table, seq_lens, scale, out, lse, plan) -> MlaCall:
    """The call's checks: the plan's widths (MLA's without a plan), this module's bounds."""
    return check_mla_call(
        q,
        kv_cache,
        page_table,
        seq_lens,
        scale=scale,
        out=out,
        lse=lse,
        head_dim_qk=plan.head_dim_qk if plan is not None else MLA_HEAD_DIM_QK,
        head_dim_v=plan.head_dim_v if plan is not None else MLA_HEAD_DIM_V,
        max_heads=MAX_HEADS,
        max_qlen=MAX_QLEN,
    )


def lse_args(lse: torch.Tensor | None, out: torch.Tensor) -> tuple[torch.Tensor, tuple]:
    """(pointer, strides) for a kernel's lse argument; without lse a stand-in never written
    (the kernels' WRITE_LSE is off)."""
    return (lse, lse.stride()) if lse is not None else (out, (0, 0, 0))


def _launch(
    plan: DecodePlan,
    q: torch.Tensor,
    call: MlaCall,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor | None,
    merge: bool = True,
) -> None:
    """Both stages (stage 1 alone without `merge`)."""
    kv = call.kv_cache
    ws = plan.workspace
    head_dim_pe = plan.head_dim_qk - plan.head_dim_v
    max_seq_len = page_table.shape[1] * call.page_size
    balanced = plan.schedule == "balanced"
    if balanced:
        # One program per partial slot (kernels/balanced.py), or per schedule program.
        programs = plan.num_programs + (0 if plan.program_loop else call.batch)
        kernel, grid = mla_balanced_kernel, programs * plan.num_head_blocks
        schedule_args = (plan.num_programs,)
        schedule_consts = {
            "BLOCK_B": plan.block_b,
            "piece_ranges_ptr": ws.piece_ranges,
            "PROGRAM_LOOP": plan.program_loop,
            "PIECE_COST": plan.piece_cost,
        }
    else:
        kernel, grid = mla_split_kernel, plan.num_splits * call.batch * plan.num_head_blocks
        schedule_args = (plan.num_splits,)
        schedule_consts = {
            "SPLIT_MAJOR": plan.grid_order == "split_major",
            **merge_stream_args(plan),
        }
    block_dv = next_pow2(plan.head_dim_v)
    block_dpe = max(16, next_pow2(max(head_dim_pe, 1)))
    if plan.kv_tma:
        descriptors = kv_descriptors(kv, call.page_size, plan.block_n, block_dv, block_dpe)
        schedule_consts.update(descriptors)
    with on_device(q.device):
        # The warp-specialized kernel where the plan took it and the pool can be described;
        # otherwise the Triton kernel with the plan's (same-tile) knobs.
        launched = plan.warp_specialized and warp_specialized.launch_stage_one(
            plan, q, kv, call.page_size, page_table, seq_lens, call.scale * LOG2_E, out, lse,
        )  # fmt: skip
        if not launched:
            kernel[(grid,)](
                q,
                kv,
                page_table,
                seq_lens,
                ws.partial_o,
                ws.partial_lse,
                call.scale * LOG2_E,
                call.batch,
                kv.shape[0],
                page_table.shape[1],
                *schedule_args,
                *q.stride()[:3],
                *kv.stride()[:2],
                page_table.stride(0),
                NUM_HEADS=call.num_heads,
                QLEN=call.qlen,
                HEAD_DIM_V=plan.head_dim_v,
                HEAD_DIM_PE=head_dim_pe,
                BLOCK_DV=block_dv,
                BLOCK_DPE=block_dpe,
                PAGE_SIZE=call.page_size,
                BLOCK_H=plan.block_h,
                BLOCK_N=plan.block_n,
                PREFETCH_PAGE=plan.page_prefetch,
                LATENT_CHAINS=plan.latent_chains,
                RELEASE_MERGE=plan.dependent_launch,
                num_warps=plan.split_num_warps,
                num_stages=plan.split_num_stages,
                **schedule_consts,
            )
        if merge and merge_follows(plan, launched):
            merge_workspace(
                plan,
                seq_lens,
                out,
                lse,
                max_seq_len=max_seq_len,
                whole_pieces=launched and plan.whole_pieces,
            )


def merge_follows(plan: DecodePlan, launched: bool = True) -> bool:
    """Whether stage 2 runs after the plan's stage 1 (`launched`: on the Gluon kernel): not
    where a one-split uniform plan's `whole_pieces` had every program write its request's
    output itself."""
    return not (launched and plan.whole_pieces and plan.schedule == "uniform")


def merge_stream_args(plan: DecodePlan) -> dict:
    """Stage 1's arguments for the plan's `merge_streams` (none without it): the flags it
    raises for the merge's programs, and how many of those a row has."""
    if not plan.merge_streams:
        return {}
    return {
        "split_flags_ptr": plan.workspace.split_flags,
        "MERGE_STREAMS": True,
        "D_SPLIT": plan.merge_d_split,
    }


def kv_descriptors(
    kv: torch.Tensor, page_size: int, block_n: int, block_dv: int, block_dpe: int
) -> dict:
    """Host tensor descriptors for `kv_tma`: the pool as rows [num_pages * page_size, d_qk],
    read in boxes of block_n rows by half the latent width (two per block) and by the rope
    width (the box may run past d_qk: the copy fills those columns with zeros). A pool whose
    rows are not page-contiguous or 16-byte aligned (a strided view) cannot be described
    that way: it gets no descriptors, and the kernel's masked loads read it instead."""
    if not rows_describable(kv, page_size):
        return {}
    shape, strides = [kv.shape[0] * page_size, kv.shape[-1]], [kv.stride(1), 1]
    return {
        "latent_desc": TensorDescriptor(kv, shape, strides, [block_n, block_dv // 2]),
        "rope_desc": TensorDescriptor(kv, shape, strides, [block_n, block_dpe]),
        "KV_TMA": True,
    }


def merge_workspace(
    plan: DecodePlan,
    seq_lens: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor | None,
    *,
    max_seq_len: int,
    window_left: int = -1,
    sinks: torch.Tensor | None = None,
    whole_pieces: bool = False,
    program_times: torch.Tensor | None = None,
) -> None:
    """Stage 2: merge the partials stage 1 left in the plan's workspace into out/lse.

    window_left >= 0: stage 1 split only the keys that window can see (GQA). sinks: one
    natural-log logit per head added to each row's softmax denominator (GQA). whole_pieces
    (balanced): stage 1 wrote the rows of every request one piece held (the Gluon program loop
    with the plan's `whole_pieces`); their programs return before reading any partial.
    program_times: an int64 tensor of [programs, 3] (`merge_programs` x merge_d_split rows)
    that gets each program's start, end of its wait for stage 1 and end on the GPU's global
    timer (tools/kernel_timeline.py; NVIDIA only).

    Both launchers' second half; the benchmarks also call it alone to time the merge (the
    workspace must then hold a stage-1 result for these seq_lens).
    """
    batch, qlen, num_heads, _ = out.shape
    balanced = plan.schedule == "balanced"
    if balanced and plan.merge_long_partials:
        merge_by_length(plan, seq_lens, out, lse, max_seq_len=max_seq_len,
                        window_left=window_left, sinks=sinks, whole_pieces=whole_pieces,
                        program_times=program_times)  # fmt: skip
        return
    lse_arg, lse_strides = lse_args(lse, out)
    with on_device(out.device):
        merge = merge_rows_kernel if plan.merge_rows > 1 else merge_splits_kernel
        merge[(merge_programs(plan, batch, qlen * num_heads), plan.merge_d_split)](
            plan.workspace.partial_o,
            plan.workspace.partial_lse,
            seq_lens,
            plan.workspace.piece_ranges if balanced else seq_lens,
            out,
            lse_arg,
            max_seq_len,
            plan.num_splits,
            window_left,
            sinks if sinks is not None else plan.workspace.partial_lse,
            batch,
            plan.num_programs,
            *out.stride()[:3],
            *lse_strides,
            BALANCED=balanced,
            program_times_ptr=program_times,
            TIME_PROGRAMS=program_times is not None,
            split_flags_ptr=plan.workspace.split_flags,
            MERGE_STREAMS=plan.merge_streams,
            **merge_constants(plan, out, lse, window_left, sinks, whole_pieces and balanced),
        )


def merge_by_length(plan: DecodePlan, seq_lens: torch.Tensor, out: torch.Tensor,
                    lse: torch.Tensor | None, *, max_seq_len: int, window_left: int,
                    sinks: torch.Tensor | None, whole_pieces: bool,
                    program_times: torch.Tensor | None = None) -> None:  # fmt: skip
    """`merge_workspace` for a balanced plan with `merge_long_partials`: the requests of more
    partials one row a program, the rest `merge_rows` a program (kernels/merge_by_length.py).
    The long programs cover as many requests as can have that many partials, so the grid
    depends on the plan alone (`merge_programs`)."""
    batch, qlen, num_heads, _ = out.shape
    lse_arg, lse_strides = lse_args(lse, out)
    with on_device(out.device):
        merge_by_length_kernel[(merge_programs(plan, batch, qlen * num_heads),
                                plan.merge_d_split)](
            plan.workspace.partial_o,
            plan.workspace.partial_lse,
            seq_lens,
            plan.workspace.piece_ranges,
            out,
            lse_arg,
            max_seq_len,
            window_left,
            sinks if sinks is not None else plan.workspace.partial_lse,
            batch,
            plan.num_programs,
            long_slots(plan, batch),
            *out.stride()[:3],
            *lse_strides,
            BLOCK_B=next_pow2(batch),
            LONG_PARTIALS=plan.merge_long_partials,
            program_times_ptr=program_times,
            TIME_PROGRAMS=program_times is not None,
            **merge_constants(plan, out, lse, window_left, sinks, whole_pieces),
        )  # fmt: skip


def merge_programs(plan: DecodePlan, batch: int, rows: int) -> int:
    """The merge's programs a column slice for `batch` requests of `rows` query rows: one per
    `merge_rows` rows, and with `merge_long_partials` (balanced) one a row for each request
    that can have more partials (kernels/merge_by_length.py) before them."""
    if plan.schedule == "balanced" and plan.merge_long_partials:
        return long_slots(plan, batch) * rows + batch * rows // plan.merge_rows
    return batch * rows // plan.merge_rows


def long_slots(plan: DecodePlan, batch: int) -> int:
    """The requests the merge sized by partials gives one-row programs: as many as can have
    more than `merge_long_partials` partials (their pieces share at most boundary programs)."""
    return min(batch, (plan.num_programs - 1) // plan.merge_long_partials)


def merge_constants(plan: DecodePlan, out: torch.Tensor, lse: torch.Tensor | None,
                    window_left: int, sinks: torch.Tensor | None,
                    whole_pieces: bool) -> dict:  # fmt: skip
    """The launch keywords every merge kernel takes alike (`merge_workspace`,
    `merge_by_length`): the rows' shape, the plan's merge tiling, what is written, and the
    dependent launch after stage 1 (merge_streams: the flags stand in for the wait, split by
    split)."""
    _, qlen, num_heads, _ = out.shape
    return {
        "NUM_HEADS": num_heads,
        "QLEN": qlen,
        "HEAD_DIM_V": plan.head_dim_v,
        "SPLIT_BLOCK_N": plan.block_n,
        "BLOCK_S": plan.merge_block_s,
        "BLOCK_D": plan.merge_block_d,
        "WRITE_LSE": lse is not None,
        "HAS_WINDOW": window_left >= 0,
        "HAS_SINKS": sinks is not None,
        "WAIT_FOR_STAGE_1": plan.dependent_launch and not plan.merge_streams,
        "WHOLE_PIECES": whole_pieces,
        "RELEASE_NEXT": plan.early_start,
        "ROWS_PER_PROGRAM": plan.merge_rows,
        "num_warps": plan.merge_num_warps,
        **({"launch_pdl": True} if plan.dependent_launch else {}),
    }

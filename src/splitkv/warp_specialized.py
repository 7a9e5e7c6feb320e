"""Host side of the warp-specialized MLA stage 1 (kernels/mla_warp_specialized.py): whether
it can run, its tensor descriptors, its launch."""

from __future__ import annotations

import functools
import importlib.util

import torch
import triton

from splitkv.checks import check_int, rows_describable

# What the kernel is built for (absorbed MLA on Hopper's wgmma).
HEAD_DIM_QK, HEAD_DIM_V = 576, 512
BLOCK_H, BLOCK_N, NUM_STAGES, NUM_WARPS = 64, 64, 2, 8
# Head blocks of 16-32 rows run with the keys as wgmma's rows (kernels/mla_keys_as_rows.py), on
# one consumer warpgroup; 64-row ones may (`keys_as_rows`), on two.
NARROW_BLOCK_H, NARROW_NUM_WARPS = (16, 32), 4
CONSUMER_WARPS = 4  # a warpgroup: wgmma's unit (the plan's `consumer_groups` count them)
# The 64-row tile's default consumers where it runs two or more head blocks a request: two
# warpgroups taking turns on the key blocks (`alternate_blocks`, kernels/mla_alternate_blocks.py,
# plan_rules.alternate_blocks_for; H200: -6 to -10% at 128 heads and at 16 heads x qlen 8
# against two splitting every block, docs/perf.md v0.2.19). They keep two blocks in work, one
# a warpgroup, so their ring holds 4 blocks of 32 keys (the same 144 KB as 2 of 64): two
# stages free for the copies while two are read.
ALTERNATE_BLOCKS = True
ALTERNATE_BLOCK_N, ALTERNATE_STAGES = 32, 4
MIN_COPY_ROWS = 8  # a copy of fewer rows would cut the buffers' 8-row swizzle pattern
# The program loop's default `piece_cost`: its schedule counts each request as this many key
# blocks beside its own (H200, 12 heads x qlen 4: a piece's queries, masked last block and
# partial store cost ~5-8 us against ~2.9 us a block; tools/program_times.py, docs/perf.md
# v0.2.8e). A device's `wide_loop_piece_cost` replaces it on 64-row head blocks, alternating
# or not (the H100's 4).
PIECE_COST = 2
# The same for the keys-as-rows consumers' 32-row head blocks (12 or 16 heads x qlen 2, 32
# heads): 4 blocks. H200, 1 x 327,600 + 47 short against ragged, two rounds (docs/perf.md
# session 23): 12 x qlen 2 -1.1 / +0.6 us, 16 x qlen 2 -4.1 / 0, 32 heads -1.4 / +0.5.
PIECE_COST_32_ROWS = 4
# The Gluon keys-as-rows program loop's default `whole_pieces` (a piece holding a whole request
# writes its output itself, and the merge skips the request's rows): on for calls of up to this
# many query positions (plan_rules.whole_pieces_for; 0: opt-in only).
WHOLE_PIECES_MAX_QLEN = 1
# The Gluon kernels' default `early_start` (stage 1 launched as a programmatic dependent of the
# kernel ahead of it, its schedule, page ids and first old keys read before waiting for that
# kernel), for batches of up to plan_rules.EARLY_START_MAX_ROWS query rows
# (plan_rules.early_start_by_default, docs/perf.md v0.2.12).
EARLY_START = True
# With it, the key blocks (of each program's first split or piece) the producer brings before
# that wait, up to NUM_STAGES.
EARLY_BLOCKS = 2
# The program loop scans the batch's lengths at least this wide: narrower scans (batches of up
# to 16) compiled with ~30 spilled registers reloaded in the consumers' block loop (280 bytes
# of stack at 12 heads x qlen 4; 12 heads x qlen 4 ragged ~230 us a program against ~143).
MIN_BLOCK_B = 32


# The Triton release whose Gluon the kernels are written in. Gluon changes with every release
# (3.4 lacks Hopper's wgmma in it, 3.5's warp_specialize takes its partitions another way and
# has no num_warps, 3.7 to 3.9 drop thread_barrier: `tools/compile_check.py` under each), so
# on other releases MLA runs the Triton kernels, which compile on 3.4 to 3.9.
GLUON_TRITON = (3, 6)


@functools.cache
def gluon_available() -> bool:
    """The installed Triton ships the Gluon these kernels are written in (GLUON_TRITON)."""
    if triton_release() != GLUON_TRITON:
        return False
    try:
        hopper = importlib.util.find_spec("triton.experimental.gluon.language.nvidia.hopper")
    except ModuleNotFoundError:
        return False
    return hopper is not None


def triton_release() -> tuple[int, int]:
    """The installed Triton's (major, minor)."""
    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def unsupported_reason(
    *,
    kind: str,
    balanced: bool,
    program_loop: bool,
    block_h: int,
    head_dim_qk: int,
    head_dim_v: int,
    dtype: torch.dtype,
    page_size: int,
    warpgroup_mma: bool,
    interpreted: bool,
) -> str | None:
    """Why a plan cannot take the warp-specialized kernel, or None when it can."""
    checks = (
        (not interpreted, "needs a GPU (the interpreter cannot run Gluon kernels)"),
        (warpgroup_mma, "needs a Hopper GPU (sm_90 wgmma)"),
        (
            gluon_available(),
            f"needs Triton {'.'.join(map(str, GLUON_TRITON))}'s Gluon, "
            f"installed: Triton {triton.__version__}",
        ),
        (kind == "mla", f"needs kind='mla', got {kind!r}"),
        (
            not balanced or program_loop,
            "needs the uniform schedule or the balanced one's program loop (program_loop=True)",
        ),
        (
            block_h == BLOCK_H or block_h in NARROW_BLOCK_H,
            f"needs head blocks of {(*NARROW_BLOCK_H, BLOCK_H)} rows, got {block_h}",
        ),
        (
            (head_dim_qk, head_dim_v) == (HEAD_DIM_QK, HEAD_DIM_V),
            f"needs head dims {HEAD_DIM_QK}/{HEAD_DIM_V}, got {head_dim_qk}/{head_dim_v}",
        ),
        (dtype in (torch.bfloat16, torch.float16), f"needs bfloat16 or float16, got {dtype}"),
    )
    return next((reason for ok, reason in checks if not ok), None)


def copy_rows(page_size: int, block_n: int = BLOCK_N) -> int:
    """The most rows one bulk copy of keys may take (`load_key_blocks`' SUB): the largest
    power of two that divides the page size, at most a block, so no copy crosses a page."""
    return min(page_size & -page_size, block_n)


def gathers_keys(page_size: int, block_n: int = BLOCK_N) -> bool:
    """The Gluon kernels gather a key block row by row (kernels/gathered_keys.py) instead of
    bulk copies: pages whose largest power-of-two divisor is under MIN_COPY_ROWS (1, 2, 4;
    100, 12, 6), where a copy of a whole 8-row box would cross a page."""
    return copy_rows(page_size, block_n) < MIN_COPY_ROWS


def copy_rows_for(requested: int | None, *, warp_specialized: bool, page_size: int,
                  block_n: int, preferred: int = 0) -> int:  # fmt: skip
    """The plan's `copy_rows`: 0 off the Gluon kernels and where they gather the keys row by
    row (`gathers_keys`); as requested (a power of two from MIN_COPY_ROWS up to
    `copy_rows(page_size, block_n)`), else `preferred` (a device's measured height, 0 for
    none) or that largest one, whichever is less."""
    most = copy_rows(page_size, block_n)
    gathered = gathers_keys(page_size, block_n)
    if requested is None:
        return min(preferred or most, most) if warp_specialized and not gathered else 0
    check_int("copy_rows", requested, 1)
    if not warp_specialized:
        raise ValueError(f"copy_rows: needs the warp-specialized kernel, got {requested}")
    if gathered:
        raise ValueError(
            f"copy_rows: pages of {page_size} keys are gathered row by row (no bulk copies of "
            f"keys), got {requested}"
        )
    if requested & (requested - 1) or not MIN_COPY_ROWS <= requested <= most:
        raise ValueError(
            f"copy_rows: expected a power of two in [{MIN_COPY_ROWS}, {most}] (dividing the "
            f"page size {page_size} and the {block_n}-key block), got {requested}"
        )
    return requested


def kv_row_descriptors(kv: torch.Tensor, page_size: int, block_n: int = BLOCK_N,
                       rows: int | None = None) -> tuple | None:  # fmt: skip
    """Descriptors over the pool's rows [num_pages * page_size, 576], boxes of `rows` rows
    (default: `copy_rows(page_size, block_n)`, the most a copy may take) by 256 latent columns
    and by the 64 rope columns; None for a pool whose rows are not page-contiguous and 16-byte
    aligned (the Triton kernel reads it instead). The kernels copy a key block in boxes of
    this height."""
    if not rows_describable(kv, page_size):
        return None
    if gathers_keys(page_size, block_n):
        # Gathered rows: the descriptors give the buffers' layout only (boxes of one swizzle
        # atom), and a pool of fewer rows than that takes the Triton kernel.
        if kv.shape[0] * page_size < MIN_COPY_ROWS:
            return None
        rows = MIN_COPY_ROWS
    rows = rows or copy_rows(page_size, block_n)
    shape, strides = [kv.shape[0] * page_size, kv.shape[-1]], [kv.stride(1), 1]
    return row_descriptors(kv, shape, strides, rows)


def query_row_descriptors(q: torch.Tensor, block_h: int) -> tuple | None:
    """Descriptors over q's rows [batch * qlen * heads, 576] (a request's query rows are then
    consecutive), boxes of a head block's rows; None unless q is contiguous and 16-byte
    aligned (the kernel then loads the rows through registers)."""
    if not q.is_contiguous() or q.data_ptr() % 16:
        return None
    return row_descriptors(q, [q.numel() // q.shape[-1], q.shape[-1]], [q.shape[-1], 1], block_h)


def num_warps_for(block_h: int) -> int:
    """The consumer warps (the producer's one comes on top): two warpgroups on the 64-row
    tile, one with the keys as rows."""
    return NARROW_NUM_WARPS if block_h in NARROW_BLOCK_H else NUM_WARPS


def row_descriptors(tensor: torch.Tensor, shape: list, strides: list, rows: int) -> tuple:
    """(latent, rope) Gluon descriptors over 2-D rows of 576: boxes of `rows` rows by 256
    latent columns (two per row) and by the 64 rope columns."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    def described(box: list[int]) -> TensorDescriptor:
        return TensorDescriptor(tensor, shape, strides, box, shared_layout(*box, tensor.dtype))

    return described([rows, HEAD_DIM_V // 2]), described([rows, HEAD_DIM_QK - HEAD_DIM_V])


@functools.cache
def shared_layout(rows: int, columns: int, dtype: torch.dtype):
    """The shared-memory layout a box of rows x columns of dtype takes (the same every call, and
    ~6 us to ask Gluon for: four descriptors a call)."""
    from triton.experimental.gluon import language as gl

    element = gl.bfloat16 if dtype == torch.bfloat16 else gl.float16
    return gl.NVMMASharedLayout.get_default_for([rows, columns], element)


def tile_constants(plan, q, page_size, query_descriptors) -> dict:
    """The compile-time arguments both Gluon kernels (uniform and program loop) take alike:
    the rows, the tile and its ring (the plan's key blocks: 32 keys in ALTERNATE_STAGES for
    `alternate_blocks`, whose pool descriptors then have boxes of as many rows at most), the
    consumer, the query copies, the merge's early launch, stage 1's own (`early_start`:
    launched as a dependent of the kernel ahead), the warps. The alternating consumers are two
    partitions of one warpgroup each, so the kernel's own warps are one warpgroup; the program
    loop's need the queries by bulk copies (they take turns on the buffer): without, it runs
    the column-splitting consumers on the same ring."""
    early = (
        {"EARLY_START": True, "EARLY_BLOCKS": EARLY_BLOCKS, "launch_pdl": True}
        if plan.early_start
        else {}
    )
    turns = plan.alternate_blocks and (plan.schedule != "balanced" or query_descriptors is not None)
    return {
        **early,
        **({"ALTERNATE_BLOCKS": True} if turns else {}),
        "NUM_HEADS": q.shape[2],
        "QLEN": q.shape[1],
        "BLOCK_Q": plan.block_h,
        "KEYS_AS_ROWS": plan.keys_as_rows,
        "PAGE_SIZE": page_size,
        "BLOCK_N": plan.block_n,
        "NUM_STAGES": ALTERNATE_STAGES if plan.alternate_blocks else NUM_STAGES,
        "QUERY_TMA": query_descriptors is not None,
        "RELEASE_MERGE": plan.dependent_launch,
        "num_warps": CONSUMER_WARPS * (1 if turns else plan.consumer_groups),
    }


def launch_stage_one(plan, q, kv, page_size, page_table, seq_lens, scale_log2, out,
                     lse):  # fmt: skip
    """Stage 1 of `mla_decode` on the warp-specialized kernel, its partials in the plan's
    workspace as `mla_split_kernel` (or, balanced, `mla_balanced_kernel`) leaves them; with
    the plan's `whole_pieces`, the program loop writes a one-piece request's rows of out / lse
    (lse may be None) itself, and a one-split uniform plan every request's (no merge follows:
    `mla.merge_follows`). Returns whether it launched: False when the pool cannot be
    described for bulk copies."""
    from splitkv.kernels.mla_warp_specialized import mla_warp_specialized_kernel
    from splitkv.mla import merge_stream_args  # splitkv.mla imports this module

    descriptors = kv_row_descriptors(kv, page_size, plan.block_n, plan.copy_rows)
    if descriptors is None:
        return False
    gather = gather_arguments(kv, page_size, plan.block_n)
    if plan.schedule == "balanced":
        launch_program_loop(plan, q, descriptors, page_size, page_table, seq_lens, scale_log2,
                            out=out, lse=lse, gather=gather)  # fmt: skip
        return True
    batch = q.shape[0]
    query_descriptors = query_row_descriptors(q, plan.block_h)
    grid = plan.num_splits * batch * plan.num_head_blocks
    whole, write_lse = writes_output(plan, out, lse)
    pointers, strides = output_arguments(plan, out, lse, whole, write_lse)
    mla_warp_specialized_kernel[(grid,)](
        q,
        *descriptors,
        *(query_descriptors or descriptors),
        page_table,
        seq_lens,
        plan.workspace.partial_o,
        plan.workspace.partial_lse,
        scale_log2,
        batch,
        page_table.shape[1],
        plan.num_splits,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        page_table.stride(0),
        *pointers,
        *strides,
        SPLIT_MAJOR=plan.grid_order == "split_major",
        WHOLE_OUTPUT=whole,
        WRITE_LSE=write_lse,
        **merge_stream_args(plan),
        **tile_constants(plan, q, page_size, query_descriptors),
        **gather,
    )
    return True


def gather_arguments(kv: torch.Tensor, page_size: int, block_n: int) -> dict:
    """Both Gluon kernels' arguments for gathered key rows (`gathers_keys`): the pool, its page
    and slot strides and its page count; none where bulk copies bring the keys."""
    if not gathers_keys(page_size, block_n):
        return {}
    return {
        "kv_ptr": kv,
        "stride_kv_page": kv.stride(0),
        "stride_kv_slot": kv.stride(1),
        "num_pages": kv.shape[0],
        "GATHER_KEYS": True,
    }


def writes_output(plan, out, lse) -> tuple[bool, bool]:
    """(whether stage 1 writes out itself, whether it writes lse too): the plan's
    `whole_pieces` (the program loop's one-piece requests, or every request of a one-split
    uniform plan), given an out to write."""
    whole = plan.whole_pieces and out is not None
    return whole, whole and lse is not None


def output_arguments(plan, out, lse, whole: bool, write_lse: bool) -> tuple[tuple, tuple]:
    """Both Gluon kernels' (out and lse pointers, their three strides each), for a stage 1
    that writes out (`whole`) and lse (`write_lse`) as `writes_output` decided. One that
    writes neither gets stand-ins and zero strides, so the outputs' layout does not multiply
    its compiled variants."""
    pointers = (
        out if whole else plan.workspace.partial_o,
        lse if write_lse else plan.workspace.partial_lse,
    )
    strides = (
        *(out.stride()[:3] if whole else (0, 0, 0)),
        *(lse.stride() if write_lse else (0, 0, 0)),
    )
    return pointers, strides


def launch_program_loop(
    plan, q, descriptors, page_size, page_table, seq_lens, scale_log2, program_times=None,
    out=None, lse=None, gather=None,
):  # fmt: skip
    """The balanced schedule's program loop (kernels/mla_warp_specialized_loop.py): one
    program per schedule program and head block. program_times: an int64 tensor of
    [programs, PROGRAM_TIMES] to receive each program's and piece's times in ns
    (tools/program_times.py). out (and lse): where a one-piece request's rows go with the
    plan's `whole_pieces`; without out every piece writes a partial. gather: the pool's
    `gather_arguments`, for pages whose key rows are gathered."""
    from splitkv.kernels.mla_warp_specialized_loop import mla_warp_specialized_loop_kernel

    # The copies' boxes must fit the ring's blocks (kv_row_descriptors(kv, page_size,
    # plan.block_n)): a taller box would write past its buffer.
    if descriptors[0].block_shape[0] > plan.block_n:
        raise ValueError(
            f"descriptors: boxes of {descriptors[0].block_shape[0]} rows for the plan's "
            f"{plan.block_n}-key blocks; build them with kv_row_descriptors(kv, page_size, "
            "plan.block_n)"
        )
    batch = q.shape[0]
    query_descriptors = query_row_descriptors(q, plan.block_h)
    whole, write_lse = writes_output(plan, out, lse)
    pointers, strides = output_arguments(plan, out, lse, whole, write_lse)
    mla_warp_specialized_loop_kernel[(plan.num_programs * plan.num_head_blocks,)](
        q,
        *descriptors,
        *(query_descriptors or descriptors),
        page_table,
        seq_lens,
        plan.workspace.partial_o,
        plan.workspace.partial_lse,
        plan.workspace.piece_ranges,
        *pointers,
        scale_log2,
        batch,
        page_table.shape[1],
        plan.num_programs,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        page_table.stride(0),
        *strides,
        BLOCK_B=max(plan.block_b, MIN_BLOCK_B),
        WHOLE_PIECES=whole,
        WRITE_LSE=write_lse,
        PIECE_COST=plan.piece_cost,
        program_times_ptr=program_times,
        TIME_PROGRAMS=program_times is not None,
        **tile_constants(plan, q, page_size, query_descriptors),
        **(gather or {}),
    )

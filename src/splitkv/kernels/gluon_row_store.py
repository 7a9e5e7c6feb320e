"""The epilogue of the 64-row Gluon consumers, whose wgmma rows are query rows
(`attend_key_blocks` in kernels/mla_warp_specialized.py and the alternating pair in
kernels/mla_alternate_blocks.py): half of a head block's normalised output columns, at the
rows' partial slots or, where the program held its request's every key, as the request's
output itself (so no merge has to fold it). `final_rows`, the output rows' addresses and
lse, serves the keys-as-rows consumer's epilogue too (kernels/mla_keys_as_rows.py)."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LATENT = gl.constexpr(512)
HALF = gl.constexpr(256)  # the columns a call stores
LN2 = gl.constexpr(0.6931471805599453)  # base-2 lse to natural log


@gluon.jit
def store_row_half(o, col0, lse, rows, rows_total, num_blocks, slots, partial_o_ptr,
                   partial_lse_ptr, NUM_HEADS: gl.constexpr, WITH_LSE: gl.constexpr, final=None,
                   whole=False):  # fmt: skip
    """o: [64, 256] normalised output columns [col0, col0 + 256) of the head block's rows
    (0 for rows that saw no key); lse (base 2; -inf there), rows (the request's row of each:
    query position rows // heads, head rows % heads) and slots: one per row, in the
    statistics' layout; rows from rows_total on are padding. WITH_LSE: this half also stores
    the rows' lse (one half of the two does). final, whole: as `mla_keys_as_rows.store_rows`
    (final: out and its query-position and head strides from the request's rows, then lse's
    when the call asked for it; whole: write there, not to the partial slots)."""
    d = col0 + gl.arange(0, HALF, gl.SliceLayout(0, o.type.layout))[None, :]
    # Two ifs, as in store_rows: `final is not None` is compile-time, `whole` may be a
    # run-time value (the program loop's).
    if final is not None:
        if whole:
            # Every row of the request, with keys or not: no merge writes them after this.
            store_final_half(o, d, lse, rows, rows < rows_total, NUM_HEADS, WITH_LSE, final)
        else:
            store_partial_half(o, d, lse, (rows < rows_total) & (num_blocks > 0), slots,
                               partial_o_ptr, partial_lse_ptr, WITH_LSE)  # fmt: skip
    else:
        # A split with no keys writes nothing: the merge never reads its slot.
        store_partial_half(o, d, lse, (rows < rows_total) & (num_blocks > 0), slots,
                           partial_o_ptr, partial_lse_ptr, WITH_LSE)  # fmt: skip


@gluon.jit
def store_partial_half(o, d, lse, row_ok, slots, partial_o_ptr, partial_lse_ptr,
                       WITH_LSE: gl.constexpr):  # fmt: skip
    """The rows' partial (the plan's partial dtype) and, WITH_LSE, their base-2 lse."""
    if WITH_LSE:
        gl.store(partial_lse_ptr + slots, lse, mask=row_ok)
    o_rows: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    o_slots = gl.convert_layout(slots, o_rows)[:, None] * LATENT
    ok = gl.convert_layout(row_ok, o_rows)[:, None]
    gl.store(partial_o_ptr + o_slots + d, o.to(partial_o_ptr.dtype.element_ty), mask=ok)


@gluon.jit
def store_final_half(o, d, lse, rows, row_ok, NUM_HEADS: gl.constexpr, WITH_LSE: gl.constexpr,
                     final):  # fmt: skip
    """The rows' output in out's dtype and, WITH_LSE, their lse (`final_rows`)."""
    out_ptr = final[0]
    o_rows: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    out_rows = final_rows(lse, rows, row_ok, NUM_HEADS, final, WITH_LSE)
    out_rows = gl.convert_layout(out_rows, o_rows)[:, None]
    ok = gl.convert_layout(row_ok, o_rows)[:, None]
    gl.store(out_ptr + out_rows + d, o.to(out_ptr.dtype.element_ty), mask=ok)


@gluon.jit
def final_rows(lse, rows, row_ok, NUM_HEADS: gl.constexpr, final, WITH_LSE: gl.constexpr):
    """Where the request's rows start in out (row r: query position r // heads, head
    r % heads; offsets from final's out pointer, in rows' layout), after storing their lse in
    natural log, as the merge writes it, WITH_LSE and when the call asked for it. final: (out
    + the request's offset, out's query-position and head strides), then, when the call asked
    for the lse, (lse + its offset, its strides)."""
    stride_out_pos, stride_out_head = final[1], final[2]
    q_pos, head = (rows // NUM_HEADS).to(gl.int64), (rows % NUM_HEADS).to(gl.int64)
    # The lse's part is there only when the call asked for it: a compile-time test (a
    # constexpr flag inside the tuple would reach here as a run-time i1, whose dead branch
    # broke Triton 3.6's lowering to LLVM).
    if WITH_LSE:  # noqa: SIM102 (both compile-time: a constexpr and the tuple's length)
        if len(final) > 3:
            lse_ptr, stride_lse_pos, stride_lse_head = final[3], final[4], final[5]
            # Base 2 inside the kernels, natural log outside.
            gl.store(lse_ptr + q_pos * stride_lse_pos + head * stride_lse_head, lse * LN2,
                     mask=row_ok)  # fmt: skip
    return q_pos * stride_out_pos + head * stride_out_head

"""Shared-memory helpers of the warp-specialized MLA consumers (both tile shapes)."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def zero_rows_from(buffer, first_row, BLOCK_N: gl.constexpr):
    """Rows [first_row, BLOCK_N) of a [BLOCK_N, 256] shared buffer set to 0, 16 rows at a time
    (a whole tile at once would need 32 more registers per thread beside O's 128), by the
    warps of whichever partition calls it."""
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [gl.num_warps(), 1], [1, 0])
    for r in gl.static_range(0, BLOCK_N, 16):
        part = buffer.slice(r, 16)
        rows = r + gl.arange(0, 16, gl.SliceLayout(1, layout))
        values = part.load(layout)
        part.store(gl.where((rows < first_row)[:, None], values, 0.0).to(values.dtype))

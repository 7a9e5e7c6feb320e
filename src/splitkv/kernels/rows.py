"""Where a request's query rows live in the [batch, qlen, heads, ...] tensors (q, out, lse)."""

import triton
import triton.language as tl


@triton.jit
def row_offsets(request, q_pos, head, stride_batch, stride_pos, stride_head):
    """64-bit element offsets of the rows (request, query position, head): a pool of outputs
    or queries may pass 2^31 elements."""
    return (
        request.to(tl.int64) * stride_batch
        + q_pos.to(tl.int64) * stride_pos
        + head.to(tl.int64) * stride_head
    )

"""Triton kernels only: `@triton.jit` code, one file per stage. Launchers live in `splitkv.mla`."""

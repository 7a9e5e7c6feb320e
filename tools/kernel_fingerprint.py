"""Fingerprints of the stage-1 MLA kernels' PTX for sm_90 at the configurations the planner
uses (the Triton tiles and the warp-specialized Gluon ones, uniform and program loop) and of
the merges' (one row, several rows and sized by partials, MLA's and GQA's rows), to show that a
refactor leaves the compiled kernels unchanged (no GPU needed).

    python tools/kernel_fingerprint.py > /tmp/before.txt
    # ... change the kernel source ...
    python tools/kernel_fingerprint.py | diff /tmp/before.txt - && echo unchanged

Line-number (.loc) and debug-section lines are dropped, so moving code between jit helpers
changes the fingerprint only where the instructions change.
"""

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inspect_kernel import compile_split, compile_warp_specialized
from inspect_merge import compile_merge

# (block_h, block_n, warps, stages, prefetch, latent chains, heads, balanced batch)
CONFIGS = [
    (16, 64, 4, 2, False, 1, 12, 0),  # 16-row tile, one chain
    (16, 64, 4, 2, False, 2, 12, 0),  # the v0.2.2 default for <= 16 rows
    (16, 32, 4, 3, True, 2, 16, 0),  # page ids a block ahead, 3 stages
    (32, 64, 4, 2, False, 2, 24, 0),  # 32-row tile (MTP)
    (64, 64, 8, 2, False, 1, 128, 0),  # 64-row wgmma tile
    (16, 64, 4, 2, True, 1, 12, 48),  # balanced stage 1
]
# Gluon: (page size, heads, qlen, balanced batch: 0 for the uniform kernel, rows a program,
# the 64-row consumers taking turns)
GLUON_CONFIGS = [
    (64, 128, 1, 0, 64, False),  # 128 heads, two head blocks, the column-splitting consumers
    (8, 16, 4, 0, 64, False),  # MTP, one copy per 8-token page
    (64, 128, 1, 8, 64, False),  # the program loop, a small batch
    (64, 12, 4, 48, 64, False),  # the program loop at MTP
    (64, 12, 1, 0, 16, False),  # keys as rows: 12 heads
    (16, 12, 2, 0, 32, False),  # and qlen 2, 16-token pages
    (64, 16, 1, 48, 16, False),  # keys as rows, the program loop
    (64, 128, 1, 0, 64, True),  # 128 heads, the alternating consumers (the default)
    (8, 16, 8, 48, 64, True),  # and in the program loop, 8-token pages
]
# The merges: (block_s, block_d, warps, heads, qlen, head dim, balanced, whole pieces, merge
# streams, rows a program, long partials, sinks)
MERGE_CONFIGS = [
    (64, 64, 1, 12, 1, 512, True, True, False, 1, 0, False),  # MLA balanced, one row a program
    (32, 32, 1, 16, 1, 512, False, False, False, 1, 0, False),  # MLA uniform splits
    (16, 64, 1, 16, 1, 512, False, False, True, 1, 0, False),  # merge_streams' flags
    (8, 64, 4, 64, 4, 64, True, False, False, 8, 0, True),  # GQA gpt-oss rows, sinks
    (16, 128, 2, 32, 2, 128, False, False, False, 4, 0, False),  # GQA uniform, 4 rows
    (64, 64, 1, 12, 4, 512, True, True, False, 4, 16, False),  # sized by partials (default)
    (16, 64, 1, 12, 4, 512, True, False, False, 2, 8, True),  # and pinned, with sinks
]
DEBUG_PREFIXES = (".loc", ".file", "//", "$L__", ".section", ".b8", ".b32", ".b64")


def fingerprint(ptx: str) -> str:
    lines = (line for line in ptx.splitlines() if not line.strip().startswith(DEBUG_PREFIXES))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def main() -> None:
    for block_h, block_n, warps, stages, prefetch, chains, heads, batch in CONFIGS:
        kernel = compile_split(
            block_h, block_n, warps, stages, prefetch, heads=heads, latent_chains=chains,
            balanced_batch=batch,
        )  # fmt: skip
        name = f"h{heads} rows{block_h} n{block_n} w{warps} s{stages} pf{int(prefetch)}"
        print(f"{name} chains{chains} balanced{batch}: {fingerprint(kernel.asm['ptx'])}")
    for page_size, heads, qlen, batch, block_q, alternate in GLUON_CONFIGS:
        kernel = compile_warp_specialized(page_size, heads, qlen, 90, batch, block_q=block_q,
                                          alternate_blocks=alternate)  # fmt: skip
        turns = " alternate" if alternate else ""
        name = f"gluon h{heads} q{qlen} page{page_size} balanced{batch} rows{block_q}{turns}"
        print(f"{name}: {fingerprint(kernel.asm['ptx'])}")
    for (block_s, block_d, warps, heads, qlen, head_dim, balanced, whole, streams, rows, long,
         sinks) in MERGE_CONFIGS:  # fmt: skip
        kernel = compile_merge(block_s, block_d, warps, heads, qlen, balanced, whole, 90,
                               merge_streams=streams, head_dim=head_dim, rows=rows,
                               long_partials=long, has_sinks=sinks)  # fmt: skip
        name = (f"merge h{heads} q{qlen} d{head_dim} s{block_s} d{block_d} w{warps} "
                f"balanced{int(balanced)} whole{int(whole)} streams{int(streams)} rows{rows} "
                f"long{long} sinks{int(sinks)}")  # fmt: skip
        print(f"{name}: {fingerprint(kernel.asm['ptx'])}")


if __name__ == "__main__":
    main()

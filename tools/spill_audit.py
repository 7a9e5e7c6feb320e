"""Which Triton MLA stage-1 tiles the planner picks spill in their key-block loop, found on the
CPU: plan issue 5's ragged and one-long batches and a uniform one at each head count, qlen and
page size on a device preset with the Gluon kernels off (the Triton tiles every page off a
power of two, every page under a block, and every GPU without the copy engine takes), compile
each distinct tile for sm_90 as `tools/inspect_kernel.py` does, and print its registers, stack,
loop instructions and spilled loads and stores a pass, worst first. A tile that spills is where
the next measured win may be (session 62's 64-row tile at page 100, session 63's balanced
16- and 32-row tiles both spilled).

    python tools/spill_audit.py --heads 12 16 --qlen 1 2 --page-size 100 4 --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"  # the kernels compile for real (splitkv reads it on import)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)

import splitkv
from splitkv.bench.shapes import special_shapes, with_labels


@dataclasses.dataclass(frozen=True)
class Tile:
    """What `inspect_kernel.compile_split` builds (its parameters, by name): a plan's stage-1
    Triton tile."""

    block_h: int
    block_n: int
    warps: int
    stages: int
    prefetch: bool
    page_size: int
    heads: int
    qlen: int
    balanced_batch: int
    latent_chains: int
    kv_tma: bool
    program_loop: bool


def batches(heads: int, qlen: int) -> dict[str, list[int]]:
    """Issue 5's ragged and one-long batches, and 8 requests of 65,536 keys (uniform splits)."""
    special = with_labels(special_shapes(heads, "bf16", qlen), ["ragged", "1x"])
    named = {shape.label.split()[0]: list(shape.seq_lens) for shape in special}
    return {**named, "uniform": [65536] * 8}


def tile_of(plan, heads: int, qlen: int, page_size: int) -> Tile:
    balanced = plan.schedule == "balanced"
    return Tile(plan.block_h, plan.block_n, plan.split_num_warps, plan.split_num_stages,
                plan.page_prefetch, page_size, heads, qlen,
                plan.batch_size if balanced else 0, plan.latent_chains, plan.kv_tma,
                balanced and plan.program_loop)  # fmt: skip


def planned_tiles(preset: str, heads: list[int], qlens: list[int],
                  pages: list[int]) -> dict[Tile, list[str]]:  # fmt: skip
    """Each distinct Triton tile the preset's planner picks, with the batches that take it."""
    spec = splitkv.DeviceSpec.preset(preset)
    tiles: dict[Tile, list[str]] = {}
    for h in heads:
        for qlen in qlens:
            for page_size in pages:
                for name, lengths in batches(h, qlen).items():
                    plan = splitkv.plan_decode(len(lengths), max(lengths), h, qlen=qlen,
                                               page_size=page_size, seq_lens=lengths,
                                               device="meta", device_spec=spec,
                                               warp_specialized=False)  # fmt: skip
                    tile = tile_of(plan, h, qlen, page_size)
                    tiles.setdefault(tile, []).append(f"{h}x q{qlen} p{page_size} {name}")
    return tiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="h100")
    parser.add_argument("--heads", type=int, nargs="+", default=[12, 16, 128])
    parser.add_argument("--qlen", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--page-size", type=int, nargs="+", default=[100, 4, 64])
    parser.add_argument("--plans-only", action="store_true", help="list the tiles, no compile")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args()
    tiles = planned_tiles(args.preset, args.heads, args.qlen, args.page_size)
    if not args.plans_only:
        import inspect_kernel as ik  # compiles for real: imported only when needed
    rows = []
    for tile, shapes in tiles.items():
        fields = dataclasses.asdict(tile)  # compile_split's own parameter names
        row = {**fields, "batches": shapes}
        if not args.plans_only:
            kernel = ik.compile_split(**fields)
            regs, stack = ik.registers_and_stack(kernel)
            row.update(registers=regs, stack_bytes=stack, **ik.block_loop(kernel))
        rows.append(row)
    rows.sort(key=lambda r: -r.get("loop_spills", 0))
    for row in rows:
        print(json.dumps(row) if args.json else row)


if __name__ == "__main__":
    main()

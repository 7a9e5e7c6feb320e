"""When each program of the balanced Gluon program loop starts and ends, on the GPU's global
timer (kernels/mla_warp_specialized_loop.py, TIME_PROGRAMS): which programs a wave waits for,
and what their shares hold (pieces, key blocks). Needs a Hopper GPU.

    python tools/program_times.py --shape ragged --heads 12 --qlen 4
    python tools/program_times.py --seq-lens 327600 1 4096 --heads 128 --out results/
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch

import splitkv
from splitkv import warp_specialized as ws
from splitkv.bench.shapes import special_shapes
from splitkv.kernels.mla_warp_specialized_loop import PIECE_TIMES, PROGRAM_TIMES
from splitkv.testing import random_mla_case

SHAPES = {"ragged": "ragged", "one-long": "1x327600", "prefix-boundary": "prefix-boundary"}


def shares(lengths: list[int], num_programs: int, piece_cost: int = ws.PIECE_COST,
           block_n: int = ws.BLOCK_N) -> list[dict]:  # fmt: skip
    """Each schedule program's key blocks and pieces, as the program loop cuts them
    (kernels/mla_warp_specialized_loop.py: a request's blocks of block_n keys plus
    `piece_cost` units)."""
    blocks = [-(-max(n, 0) // block_n) for n in lengths]
    units = [b + piece_cost if b else 0 for b in blocks]
    total = max(sum(units), 1)
    starts = [sum(units[:r]) + piece_cost for r in range(len(units))]  # first block's unit
    result = []
    for p in range(num_programs):
        lo, hi = p * total // num_programs, (p + 1) * total // num_programs
        held = [max(0, min(hi, s + b) - max(lo, s)) for s, b in zip(starts, blocks, strict=True)]
        pieces = [r for r, n in enumerate(held) if n > 0]
        result.append({"blocks": sum(held), "pieces": len(pieces), "requests": pieces})
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="ragged")
    parser.add_argument("--seq-lens", type=int, nargs="+", help="a batch instead of --shape")
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--qlen", type=int, default=4)
    parser.add_argument("--page-size", type=int, default=64)
    parser.add_argument("--num-programs", type=int, default=None)
    parser.add_argument("--piece-cost", type=int, default=None,
                        help="the schedule's units per piece beside its blocks (default: the "
                             "plan's)")  # fmt: skip
    parser.add_argument("--calls", type=int, default=3, help="the last one is reported")
    parser.add_argument("--out", default=None, help="folder for program_times_*.json")
    args = parser.parse_args()
    lengths = args.seq_lens or list(
        next(s for s in special_shapes(12) if s.label.startswith(SHAPES[args.shape])).seq_lens
    )
    case = random_mla_case(lengths, args.heads, qlen=args.qlen, page_size=args.page_size,
                           dtype=torch.bfloat16, device="cuda", contiguous=True,
                           spare_pages=0)  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), args.heads, qlen=args.qlen,
                               page_size=args.page_size, device="cuda", schedule="balanced",
                               seq_lens=lengths, num_programs=args.num_programs,
                               warp_specialized=True, piece_cost=args.piece_cost)  # fmt: skip
    descriptors = ws.kv_row_descriptors(case.kv_cache, args.page_size, plan.block_n,
                                        plan.copy_rows)  # fmt: skip
    grid = plan.num_programs * plan.num_head_blocks
    times = torch.zeros(grid, PROGRAM_TIMES.value, dtype=torch.int64, device="cuda")
    scale_log2 = case.q.shape[-1] ** -0.5 * 1.4426950408889634
    for _ in range(args.calls):
        ws.launch_program_loop(plan, case.q, descriptors, args.page_size, case.page_table,
                               case.seq_lens, scale_log2, program_times=times)  # fmt: skip
    torch.cuda.synchronize()
    # us from the first program's start; piece events: (start, queries in, end) per piece
    us = ((times - times[:, 0].min()).double() / 1000).where(times > 0, float("nan")).cpu()
    start, end = us[:, 0], us[:, 1]
    schedule = shares(lengths, plan.num_programs, plan.piece_cost, plan.block_n)
    rows = []
    for pid in range(grid):
        share = schedule[pid // plan.num_head_blocks]
        events = us[pid, 2:].view(PIECE_TIMES.value, 3)[: min(share["pieces"], PIECE_TIMES.value)]
        rows.append({"pid": pid, "program": pid // plan.num_head_blocks,
                     "start_us": start[pid].item(), "end_us": end[pid].item(), **share,
                     "pieces_us": [[round(t, 2) for t in e.tolist()] for e in events]})  # fmt: skip
    durations = [r["end_us"] - r["start_us"] for r in rows]
    print(f"{grid} programs ({plan.num_programs} x {plan.num_head_blocks} head blocks), "
          f"kernel {max(end).item():.1f} us; program time min / median / max "
          f"{min(durations):.1f} / {statistics.median(durations):.1f} / "
          f"{max(durations):.1f} us; last start {max(start).item():.1f} us; ends "
          f"{min(end).item():.1f} to {max(end).item():.1f} us")  # fmt: skip
    print("slowest programs (pid, program, start, end, blocks, pieces, requests; then each "
          "piece's start, queries in and end, us):")  # fmt: skip
    for r in sorted(rows, key=lambda r: r["start_us"] - r["end_us"])[:12]:
        print(f"  {r['pid']:4d} {r['program']:4d} {r['start_us']:7.1f} {r['end_us']:7.1f} "
              f"{r['blocks']:4d} {r['pieces']:3d} {r['requests'][:8]}")  # fmt: skip
        print("       " + "  ".join(f"({a:.1f} {b:.1f} {c:.1f})" for a, b, c in r["pieces_us"]))
    if args.out:
        label = args.shape if not args.seq_lens else "custom"
        name = f"program_times_{label}_h{args.heads}_q{args.qlen}_cost{plan.piece_cost}.json"
        path = Path(args.out) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"lengths": lengths, "programs": rows}, indent=1))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

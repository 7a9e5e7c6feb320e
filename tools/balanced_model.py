"""A host-side model of the flat balanced stage 1, to predict which grid size wins before a run.

Stage 1 of the balanced schedule launches one program per partial slot: num_programs + batch
programs per head block (kernels/balanced.py). The hardware starts them in launch order as
resident places free up, so a grid sized as one wave of num_programs overflows by `batch`
programs that start only when the first ones finish. The model replays that: the pieces the
device would cut (the same arithmetic as `piece_of_slot`), started in slot order on `resident`
places, each active piece streaming key blocks at min(one program's latency-bound rate, the
read bandwidth shared by the active pieces), plus a fixed cost per piece.

    python tools/balanced_model.py                       # issue 5's batches, a few grid sizes
    python tools/balanced_model.py --seq-lens 327600 1 4096 --programs 200 264 --resident 264

Its constants are rough (calibrated on the uniform 12-head 327k x 8 run: 692 us); use it to
rank grid sizes and to write predictions, not as a measurement.
"""

import argparse
import sys

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
from splitkv.bench.shapes import special_shapes


def piece_blocks(seq_lens: list[int], num_programs: int, block_n: int = 64) -> list[int]:
    """Key blocks of the piece each slot's program attends, in slot (launch) order."""
    blocks = [-(-max(n, 0) // block_n) for n in seq_lens]
    total = max(sum(blocks), 1)
    ends, running = [], 0
    for count in blocks:
        running += count
        ends.append(running)
    work = []
    for slot in range(num_programs + len(seq_lens)):
        size = 0
        for request, (count, end) in enumerate(zip(blocks, ends, strict=True)):
            program = slot - request
            if count and 0 <= program < num_programs:
                lo = max(end - count, program * total // num_programs)
                hi = min(end, (program + 1) * total // num_programs)
                size = max(size, hi - lo)
        work.append(size)
    return work


def stage1_us(work: list[int], resident: int, bandwidth: float, cap: float, overhead: float):
    """Finish time of the last piece: `bandwidth` and `cap` in blocks per us (all active pieces
    together, one piece alone), `overhead` in blocks per piece."""
    pending = [w + overhead for w in work if w > 0]
    pending.reverse()  # pop() takes the next in launch order
    active: list[float] = []
    now = 0.0
    while pending or active:
        while pending and len(active) < resident:
            active.append(pending.pop())
        rate = min(cap, bandwidth / len(active))
        step = min(active) / rate
        now += step
        active = [left - step * rate for left in active if left - step * rate > 1e-9]
    return now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-lens", type=int, nargs="+", help="default: issue 5's batches")
    parser.add_argument("--programs", type=int, nargs="+", help="default: around the wave")
    parser.add_argument("--resident", type=int, default=264, help="programs an H200 holds")
    parser.add_argument("--block-kb", type=float, default=72.0, help="KV bytes per block")
    parser.add_argument("--read-tbps", type=float, default=4.36, help="streaming rate reached")
    parser.add_argument("--block-us", type=float, default=2.0, help="one program alone")
    parser.add_argument("--overhead", type=float, default=0.5, help="blocks' worth per piece")
    args = parser.parse_args()
    bandwidth = args.read_tbps * 1e12 / (args.block_kb * 1024) / 1e6
    batches = {"given": args.seq_lens}
    if not args.seq_lens:  # issue 5's ragged batches, as `splitkv bench --special` runs them
        ragged = ("ragged", "1x327600+47 short")
        batches = {s.label: list(s.seq_lens) for s in special_shapes() if s.label in ragged}
    for name, lengths in batches.items():
        wave, batch = args.resident, len(lengths)
        grids = args.programs or [wave - batch, wave, 2 * wave - batch, 2 * wave, 4 * wave]
        for programs in (p for p in grids if p >= 1):
            work = piece_blocks(lengths, programs)
            time = stage1_us(work, wave, bandwidth, 1 / args.block_us, args.overhead)
            launched = programs + batch
            print(f"{name}: {programs} programs ({launched} launched): stage 1 ~{time:.0f} us")


if __name__ == "__main__":
    main()

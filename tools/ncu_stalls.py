"""Where a kernel's warps wait, from ncu's per-instruction stall samples (SourceCounters):
each mbarrier wait of the SASS, how often it ran, and its share of the samples of its loop.

    NCU_SOURCE=1 bash tools/ncu_kernel.sh NAME KERNEL_REGEX [profile_one.py args...]
    python tools/ncu_stalls.py $STEP_OUT/NAME_sass.csv[.gz] [...]

A wait is a `SYNCS.PHASECHK.TRANS64.TRYWAIT` and the branch after it (the samples land on the
branch while the try-wait is suspended); its retries sit in a block at the kernel's end that
runs once per time-out. A loop is the instructions that ran as often as the wait did (a
warp-specialized kernel's producer and consumers run different counts a key block: 1 warp
against 4), so "share" is the fraction of that role's samples spent in that wait.

The busiest loop is also cut into phases in program order ("phases"): before its wait, the
wait, up to its first wgmma (building the shared-memory descriptors), then each wgmma chain from
its first HGMMA to the WARPGROUP.DEPBAR that waits for it, and the code between chains (in the
MLA consumers: S, the softmax and P's store, P V). Each phase's share is of the loop's samples.
"""

import argparse
import csv
import gzip
import io
import json
from collections import Counter
from pathlib import Path


def read_sass(path: Path) -> list[dict]:
    """The source page's rows: offset from the first instruction, text, samples, executions,
    and the stall reasons' samples."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        rows = list(csv.reader(io.StringIO(handle.read())))
    header = next(i for i, row in enumerate(rows) if "Address" in row)
    names = rows[header]
    col = {name: names.index(name) for name in names}
    out = []
    for row in rows[header + 1 :]:
        if len(row) < len(names) or not row[col["Address"]].startswith("0x"):
            continue
        out.append({
            "address": int(row[col["Address"]], 16),
            "source": row[col["Source"]].strip(),
            "samples": int(row[col["Warp Stall Sampling (All Samples)"]] or 0),
            "executed": int(row[col["Instructions Executed"]] or 0),
            "stalls": {n[len("stall_"):]: int(row[i] or 0) for n, i in col.items()
                       if n.startswith("stall_") and "Not Issued" not in n},
        })  # fmt: skip
    base = out[0]["address"]
    for instruction in out:
        instruction["offset"] = instruction["address"] - base
    return out


def barrier_waits(instructions: list[dict]) -> list[dict]:
    """Each executed try-wait with the samples of the branch after it, and that wait's share
    of the samples of the instructions that ran as often (its loop)."""
    by_count = Counter()
    for instruction in instructions:
        by_count[instruction["executed"]] += instruction["samples"]
    waits = []
    for i, instruction in enumerate(instructions[:-1]):
        if "TRYWAIT" not in instruction["source"] or not instruction["executed"]:
            continue
        samples = instruction["samples"] + instructions[i + 1]["samples"]
        loop = by_count[instruction["executed"]]
        waits.append({"offset": hex(instruction["offset"]),
                      "barrier": instruction["source"].split("[")[1].split("]")[0],
                      "executed": instruction["executed"], "samples": samples,
                      "loop_samples": loop,
                      "share": round(samples / loop, 3) if loop else None})  # fmt: skip
    return waits


def loop_stalls(instructions: list[dict], executed: int) -> dict:
    """The stall reasons of the instructions that ran `executed` times, largest first."""
    total = Counter()
    for instruction in instructions:
        if instruction["executed"] == executed:
            total.update(instruction["stalls"])
    return dict(total.most_common(8))


def phases(instructions: list[dict], executed: int) -> list[dict]:
    """The instructions that ran `executed` times, in program order, cut into phases: "before
    wait", "wait" (the try-waits and their branches), "to wgmma 1", then "wgmma k" (an HGMMA through
    the WARPGROUP.DEPBAR after it) and "after wgmma k" alternately; each with its instruction
    count, samples, share of the loop's samples and three largest stall reasons."""
    loop = sorted((i for i in instructions if i["executed"] == executed),
                  key=lambda i: i["offset"])  # fmt: skip
    total = sum(i["samples"] for i in loop) or 1
    # A wait inside a later phase (the 64-row consumers wait for each other's P there) counts
    # as "wait", and the phase it interrupted resumes after it.
    labels, name, resume, chains, in_chain = [], "before wait", "to wgmma 1", 0, False
    for k, instruction in enumerate(loop):
        source = instruction["source"]
        if "TRYWAIT" in source or (k and "TRYWAIT" in loop[k - 1]["source"]):
            if name not in ("wait", "before wait"):
                resume = name
            name = "wait"
        elif "HGMMA" in source and not in_chain:
            chains, in_chain = chains + 1, True
            name = f"wgmma {chains}"
        elif name == "wait":
            name = resume
        labels.append(name)
        if in_chain and "WARPGROUP.DEPBAR" in source:
            in_chain, name = False, f"after wgmma {chains}"
    result = []
    for label in dict.fromkeys(labels):
        members = [i for i, n in zip(loop, labels, strict=True) if n == label]
        stalls = Counter()
        for instruction in members:
            stalls.update(instruction["stalls"])
        samples = sum(i["samples"] for i in members)
        result.append({"phase": label, "instructions": len(members), "samples": samples,
                       "share": round(samples / total, 3),
                       "stalls": dict(stalls.most_common(3))})  # fmt: skip
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", type=Path, nargs="+")
    args = parser.parse_args()
    for path in args.paths:
        instructions = read_sass(path)
        waits = barrier_waits(instructions)
        busiest = max(waits, key=lambda w: w["loop_samples"] if w["share"] else 0)
        print(json.dumps({"file": path.name,
                          "samples": sum(i["samples"] for i in instructions),
                          "waits": [w for w in waits if w["samples"] >= 10],
                          "busiest_loop_stalls": loop_stalls(instructions,
                                                             busiest["executed"]),
                          "phases": phases(instructions, busiest["executed"])}))  # fmt: skip


if __name__ == "__main__":
    main()

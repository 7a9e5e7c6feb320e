"""Time GQA batches on their default plans and on variants of them: each variant replaces plan
fields after `plan_decode` made the plan, so every rule the fields do not name still runs
(pinning a knob through `plan_decode` instead can switch the GQA tile rules off). One JSON
line a batch: CUDA-graph medians in us per variant and round, and each variant's plan.

    python tools/gqa_plan_ab.py --batch gpt-oss:8:64:4096 gpt-oss:8:32:16384 \\
        --variant "3 stages" split_num_stages=3 --rounds 2 --out /tmp/ab.jsonl
    python tools/gqa_plan_ab.py --batch qwen-64-8:4:64:4096 --variant "64 keys" block_n=64 \\
        --plans-only    # the plans on the H200 preset, no GPU

Only stage 1's tile fields may be replaced (TILE_FIELDS); the others size the workspace. A
variant may also set PLAN_KNOBS, which plan the whole call anew with them, the tile fields
replaced after: `block_h=16` plans GQA head blocks of 16 rows (the planner's `block_h_for` is
replaced for that plan: `plan_decode` takes block_h for MLA only), `schedule=balanced`,
`num_splits=1` (uniform splits, the count pinned: the long-split tile only where it fits),
`long_split=False` (the planner's plan with `gqa_tile_rules.gqa_long_split_count` off: uniform
splits keep the fill rule's count and the uniform tile's own rules, as on an unmeasured tile).
A knob's value `@NAME` takes that field of variant NAME's plan for the same batch (a variant
named before it; "planned" is the default): `--variant p1 kv_pack=1 --variant p2s kv_pack=2
num_splits=@p1` times the packed launch on the unpacked plan's split count;
`--variant half num_splits=@planned/2` the default plan's split count halved (`*2` doubled).
`--builds FILE` writes every build of the uniform stage 1 the run compiled (registers, spills,
shared memory, warps, stages and its specialisation key) as JSON lines: the GPU's own counts.
`--generic num_splits` compiles the uniform stage 1 without Triton's specialisation of that int
argument (an int equal to 1 becomes a constant), for the whole run: run it twice to compare.
`--no-lengths` plans every variant without the batch's lengths, on its table's width alone, as
an engine plans the CUDA graph it captures for a batch bucket (docs/serving.md); the timed
calls still run at the batch's lengths, as the graph's replays do. Each variant's first call
of a batch is checked against the fp32 reference on the batch's random inputs before it is
timed (`"error NAME"` in the row; `WRONG ...` on stderr past the tolerance); `--no-check`
skips the reference (a loop over the requests, seconds on the largest batches).

A batch is MODEL:QLEN:REQUESTS:KEYS (`bench.shapes.GQA_MODELS`; every request KEYS long),
MODEL:QLEN:REQUESTS:LO-HI for a ragged batch (lengths evenly from LO to HI), or
MODEL:QLEN:ragged / MODEL:QLEN:one-long (issue 5's batches, `bench.shapes.GQA_RAGGED` and
`GQA_ONE_LONG`).
"""

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
from gqa_plan_snapshot import spread_of

import splitkv
import splitkv.gqa_tile_rules as tile_rules
import splitkv.plan as plan_module
from splitkv.bench.shapes import GQA_MODELS, GQA_ONE_LONG, GQA_RAGGED

SHOWN = (
    "schedule",
    "num_splits",
    "block_h",
    "block_n",
    "split_num_stages",
    "whole_pieces",
    "kv_pack",
)
# The fields a variant may replace: stage 1's tile only. The others size the workspace or set
# what runs after stage 1, which plan_decode fixed with the plan (use its knobs for those).
TILE_FIELDS = ("block_n", "split_num_stages", "split_num_warps", "page_prefetch")
PLAN_KNOBS = ("block_h", "schedule", "num_splits", "kv_pack", "long_split")
PAGE_SIZE = 16  # `bench.shapes.gqa_batch`'s
H200 = splitkv.DeviceSpec.preset("h200")  # what --plans-only plans for


# Issue 5's GQA batches, as `splitkv bench --kind gqa --special` times them.
NAMED_BATCHES = {"ragged": list(GQA_RAGGED), "one-long": list(GQA_ONE_LONG)}


def batch_arg(text: str) -> tuple[str, int, list[int], str]:
    """(model, qlen, request lengths, the batch's name)."""
    model, qlen, *spelled = text.split(":")
    if model not in GQA_MODELS:
        raise argparse.ArgumentTypeError(f"unknown model {model!r}: one of {sorted(GQA_MODELS)}")
    if len(spelled) == 1 and spelled[0] in NAMED_BATCHES:
        return model, int(qlen), NAMED_BATCHES[spelled[0]], f"{model} {qlen} {spelled[0]}"
    requests, keys = spelled
    return model, int(qlen), spread_of(requests, keys), f"{model} {qlen} {requests} {keys}"


def field_value(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    if name not in TILE_FIELDS + PLAN_KNOBS:
        raise argparse.ArgumentTypeError(
            f"--variant: {name!r} is not one of {TILE_FIELDS + PLAN_KNOBS}"
        )
    parsed = {"True": True, "False": False}.get(value, value)
    if isinstance(parsed, str) and parsed.lstrip("-").isdigit():
        parsed = int(parsed)
    return name, parsed


def resolved(fields: dict, made: dict) -> dict:
    """A variant's fields with each `@NAME` value replaced by that field of variant NAME's plan
    (made earlier for the same batch), `@NAME*K` / `@NAME/K` by it times / over K (at least 1)."""
    out = {}
    for name, value in fields.items():
        if isinstance(value, str) and value.startswith("@"):
            source, op, factor = re.fullmatch(r"@(\w+)(?:([*/])(\d+))?", value).groups()
            if source not in made:
                raise SystemExit(f"--variant: {name}={value} names no variant made before it")
            value = getattr(made[source], name)
            if op:
                value = value * int(factor) if op == "*" else max(1, value // int(factor))
        out[name] = value
    return out


def variants_of(pairs: list[list[str]]) -> dict[str, dict]:
    """{name: {field: value}} from --variant NAME FIELD=VALUE ...; "planned" first."""
    variants = {"planned": {}}
    for name, *fields in pairs:
        variants[name] = dict(field_value(f) for f in fields)
    return variants


def split_variant(fields: dict) -> tuple[dict, dict]:
    """(tile fields replaced after planning, plan_decode knobs) of one variant."""
    tile = {k: v for k, v in fields.items() if k in TILE_FIELDS}
    return tile, {k: v for k, v in fields.items() if k in PLAN_KNOBS}


class PlanPatch:
    """`splitkv.plan_decode` replaced by one that applies `fields` to its plans and keeps the
    last plan made (the benchmark's providers plan through the module attribute)."""

    def __init__(self, lengthless: bool = False) -> None:
        self.plan_decode = splitkv.plan_decode
        self.fields: dict = {}
        self.knobs: dict = {}
        self.last = None
        self.lengthless = lengthless  # plan without the lengths (`--no-lengths`)
        splitkv.plan_decode = self

    def __call__(self, *args, **kwargs):
        if self.lengthless:
            kwargs.pop("seq_lens", None)
        knobs = dict(self.knobs)
        block_h = knobs.pop("block_h", None)
        long_split = knobs.pop("long_split", True)
        rule, long_rule = plan_module.block_h_for, tile_rules.gqa_long_split_count
        if block_h:
            plan_module.block_h_for = lambda *_: block_h
        if not long_split:
            tile_rules.gqa_long_split_count = lambda *_, **__: None
        try:
            plan = self.plan_decode(*args, **{**kwargs, **knobs})
        finally:
            plan_module.block_h_for, tile_rules.gqa_long_split_count = rule, long_rule
        self.last = dataclasses.replace(plan, **self.fields)
        return self.last


def shown(plan) -> list:
    return [getattr(plan, name) for name in SHOWN]


def table_keys(lengths: list[int]) -> int:
    """The max_seq_len the timed path plans with: its page table's width in keys (the longest
    request's pages and one unused column, `testing.random_gqa_case`'s default)."""
    return (-(-max(lengths) // PAGE_SIZE) + 1) * PAGE_SIZE


def plan_on_h200(patch: PlanPatch, model: str, qlen: int, lengths: list[int], fields: dict,
                 window_left: int = -1):  # fmt: skip
    """A variant's plan for a batch on the H200 preset, no GPU needed (its fields resolved)."""
    heads, kv_heads, dim, _ = GQA_MODELS[model]
    patch.fields, patch.knobs = split_variant(fields)
    return patch(len(lengths), table_keys(lengths), heads, qlen=qlen, kind="gqa",
                 num_kv_heads=kv_heads, head_dim=dim, page_size=PAGE_SIZE, device="meta",
                 device_spec=H200, seq_lens=lengths, window_left=window_left)  # fmt: skip


def plans_only(batches, variants, window_left: int = -1, lengthless: bool = False) -> None:
    patch = PlanPatch(lengthless)
    for model, qlen, lengths, label in batches:
        row = {"batch": label, **windowed(window_left)}
        made = {}
        for name, fields in variants.items():
            made[name] = plan_on_h200(patch, model, qlen, lengths, resolved(fields, made),
                                      window_left)  # fmt: skip
            row["plan " + name] = shown(made[name])
        print(json.dumps(row))


def compile_generic(names: list[str]) -> None:
    """The uniform stage 1 compiled without specialising these int arguments (before its first
    launch: Triton reads the flags when it makes the kernel's binder)."""
    from splitkv.kernels.gqa_split import gqa_split_kernel

    params = {p.name: p for p in gqa_split_kernel.params}
    for name in names:
        params[name].do_not_specialize = True


def compiled_builds():
    """Every build of the uniform stage 1 compiled so far, with what sets its residency."""
    from splitkv.kernels.gqa_split import gqa_split_kernel

    for caches in gqa_split_kernel.device_caches.values():
        for key, kernel in caches[0].items():
            kernel._init_handles()
            yield {
                "regs": kernel.n_regs,
                "spills": kernel.n_spills,
                "warps": kernel.metadata.num_warps,
                "stages": kernel.metadata.num_stages,
                "shared": kernel.metadata.shared,
                "resident": resident_programs(kernel),
                "key": str(key),
            }


def resident_programs(kernel) -> int:
    """Programs of a compiled kernel one SM holds at once, by the CUDA driver's occupancy
    calculator (registers, shared memory, warps): the residency the planner's wave
    arithmetic models."""
    import ctypes

    count = ctypes.c_int()
    error = ctypes.CDLL("libcuda.so.1").cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(count), ctypes.c_void_p(kernel.function),
        ctypes.c_int(32 * kernel.metadata.num_warps), ctypes.c_size_t(kernel.metadata.shared),
    )  # fmt: skip
    return count.value if error == 0 else -error


def windowed(window_left: int) -> dict:
    """A row's window field, where the run has one."""
    return {"window_left": window_left} if window_left >= 0 else {}


def checked_error(prep, want, label: str, name: str) -> float:
    """A variant's relative error against the fp32 reference's output, reported on stderr
    where it passes the tolerance (the timing is kept: the row says what was wrong)."""
    from splitkv.testing import TOLERANCES, relative_error

    got = prep.result()[0]  # relative_error's .item() waits for the call
    error = relative_error(got, want)
    if not error <= TOLERANCES[got.dtype]:  # NaN fails too
        print(f"WRONG {label} {name}: relative error {error:.2e}", file=sys.stderr, flush=True)
    return float(f"{error:.3g}")


def timed(batches, variants, rounds: int, rep_ms: int, out, window_left: int = -1,
          lengthless: bool = False, check: bool = True) -> None:  # fmt: skip
    import torch

    from splitkv.bench.providers import prepare_splitkv
    from splitkv.bench.shapes import gqa_batch
    from splitkv.bench.sweep import build_cases
    from splitkv.reference import gqa_decode as reference_gqa_decode
    from splitkv.timing import cuda_graph_times_us

    patch = PlanPatch(lengthless)
    for model, qlen, lengths, label in batches:
        case = build_cases(gqa_batch(model, lengths, qlen))[0]
        row = {"batch": label, **windowed(window_left)}
        # Each variant's first call is checked against the fp32 reference on the case's fresh
        # random inputs before it is timed: a plan that times well and computes wrong is news.
        want = None
        if check:
            want = reference_gqa_decode(*case.args, sinks=case.sinks, window_left=window_left)[0]
        for _ in range(rounds):
            made = {}
            for name, fields in variants.items():
                patch.fields, patch.knobs = split_variant(resolved(fields, made))
                prep = prepare_splitkv(case, window_left=window_left)
                made[name] = patch.last
                prep.run()
                if want is not None and "error " + name not in row:
                    row["error " + name] = checked_error(prep, want, label, name)
                row.setdefault(name, []).append(round(cuda_graph_times_us(prep.run, rep_ms)[1], 1))
                row["plan " + name] = shown(patch.last)
        del want
        print(json.dumps(row), flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
        del case
        torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", nargs="+", type=batch_arg, required=True)
    parser.add_argument("--variant", nargs="+", action="append", default=[],
                        metavar="NAME FIELD=VALUE", help="a name, then plan fields")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rep-ms", type=int, default=20, help="CUDA-graph replay time a median")
    parser.add_argument("--out", help="also write the JSON lines here")
    parser.add_argument("--builds", help="write the compiled builds' registers here (JSON lines)")
    parser.add_argument("--plans-only", action="store_true", help="print the plans, time none")
    parser.add_argument("--window-left", type=int, default=-1,
                        help="a sliding window for every batch (gpt-oss's: 127)")  # fmt: skip
    parser.add_argument("--generic", nargs="+", default=[], choices=["num_splits", "max_pages"],
                        help="the uniform stage 1's ints not to specialise")  # fmt: skip
    parser.add_argument("--no-lengths", action="store_true",
                        help="plan without the lengths, as for a CUDA graph")  # fmt: skip
    parser.add_argument("--no-check", action="store_true",
                        help="time without checking against the fp32 reference")  # fmt: skip
    args = parser.parse_args()
    try:
        variants = variants_of(args.variant)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    if args.plans_only:
        plans_only(args.batch, variants, args.window_left, args.no_lengths)
        return
    compile_generic(args.generic)
    with open(args.out, "w") if args.out else open("/dev/null", "w") as out:
        timed(args.batch, variants, args.rounds, args.rep_ms, out, args.window_left,
              args.no_lengths, not args.no_check)  # fmt: skip
    if args.builds:
        with open(args.builds, "w") as builds:
            for build in compiled_builds():
                builds.write(json.dumps(build) + "\n")


if __name__ == "__main__":
    main()

"""The `splitkv` command: `demo` (the main job), `plan` (what the planner picks) and `check`
(any shape against the fp32 reference)."""

from __future__ import annotations

import argparse
import sys

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
PARTIAL_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}  # plan_decode's partial_dtype
# Without a GPU the kernels run in Triton's interpreter, one program at a time: keep shapes small.
CPU_DEMO = {"batch": 2, "context": 300, "heads": 16, "qlen": 1, "page_size": 16, "dtype": "fp16"}
GPU_DEMO = {"batch": 8, "context": 68096, "heads": 16, "qlen": 1, "page_size": 64, "dtype": "bf16"}


# `splitkv bench`'s plan knobs: integers (--block-n 64) and on/off flags (--kv-tma,
# --no-kv-tma); each left out takes the plan's choice.
BENCH_INT_KNOBS = (
    "block_h",
    "block_n",
    "num_warps",
    "num_stages",
    "merge_block_s",
    "merge_d_split",
    "merge_num_warps",
    "merge_rows",
    "merge_long_partials",
    "latent_chains",
    "consumer_groups",
    "kv_pack",
    "copy_rows",
)
BENCH_FLAG_KNOBS = (
    ("page_prefetch", "page ids one block ahead (default: the plan's choice)"),
    ("kv_tma", "MLA key blocks by bulk tensor copies (TMA; default: where measured to pay)"),
    (
        "program_loop",
        "balanced MLA: one stage-1 program per schedule program, walking its pieces",
    ),
    (
        "warp_specialized",
        "MLA on Hopper: stage 1 on the warp-specialized Gluon kernel "
        "(default: wherever it can run)",
    ),
    (
        "keys_as_rows",
        "with the Gluon kernel: the keys as wgmma's rows (always for 16-32-row tiles; "
        "64-row ones opt-in)",
    ),
    (
        "dependent_launch",
        "launch the merge as a programmatic dependent of stage 1 (default: where supported)",
    ),
    (
        "whole_pieces",
        "Gluon keys-as-rows program loop: a request one piece holds written by stage 1 "
        "(default: on at qlen 1)",
    ),
    (
        "early_start",
        "Gluon stage 1 launched as a programmatic dependent of the kernel ahead, its "
        "prologue and first old keys before the wait (default: on up to 256 query rows)",
    ),
    (
        "merge_streams",
        "uniform MLA: the merge folds each split's partial as stage 1 flags it, instead "
        "of waiting for all of stage 1 (default: off)",
    ),
    (
        "alternate_blocks",
        "MLA, Gluon 64-row tile: its two consumer warpgroups take turns on the key blocks "
        "(default: on from two head blocks a request)",
    ),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="splitkv", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run, check and (on a GPU) time a default MLA decode")
    _shape_arguments(demo)
    plan = commands.add_parser("plan", help="print the plan for a shape")
    _shape_arguments(plan)
    plan.add_argument("--device", default=None, help="a preset (h200, mi355x, ...) to plan for")
    check = commands.add_parser("check", help="compare one shape with the fp32 reference")
    _shape_arguments(check)
    bench = commands.add_parser("bench", help="splitkv beside its peers and the ceilings (GPU)")
    _bench_arguments(bench)
    tune = commands.add_parser("tune", help="fit the planner's split rule on this GPU")
    tune.add_argument("--kind", choices=["mla", "gqa"], default="mla")
    tune.add_argument("--heads", type=int, nargs="+", default=[12, 16, 128], help="MLA heads")
    tune.add_argument("--models", nargs="+", default=None, help="GQA models (default: all)")
    tune.add_argument(
        "--context",
        type=int,
        nargs="+",
        default=None,
        help="MLA: 8192 68096 327600; GQA: 4096 32768 131072",
    )
    tune.add_argument(
        "--batch", type=int, nargs="+", default=None, help="MLA: 1 8 16 48 128; GQA: 1 8 32 128 256"
    )
    tune.add_argument(
        "--qlen", type=int, nargs="+", default=[1], help="query tokens a request (MTP: 2-8)"
    )
    tune.add_argument("--preset", default=None, help="table name (default: matched from the GPU)")
    tune.add_argument("--out", default="benchmarks/results", help="results folder")
    tune.add_argument("--tag", default="tune", help="file name stem of the results")
    tune.add_argument("--no-save", action="store_true", help="write the table to --out only")
    args = parser.parse_args(argv)
    if args.command == "bench":
        return _bench(args)
    if args.command == "tune":
        return _tune(args)
    defaults = GPU_DEMO if torch.cuda.is_available() else CPU_DEMO
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    try:
        return {"demo": _demo, "plan": _plan, "check": _check}[args.command](args)
    except (ValueError, TypeError) as bad_input:
        print(f"splitkv {args.command}: error: {bad_input}", file=sys.stderr)
        return 2


def _shape_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", type=int, help="requests (default: 8 on a GPU, 2 on the CPU)")
    parser.add_argument("--context", type=int, help="tokens per request (68096 / 300)")
    parser.add_argument("--heads", type=int, help="query heads (16)")
    parser.add_argument("--qlen", type=int, help="query tokens per request, MTP (1)")
    parser.add_argument("--page-size", type=int, help="KV page size (64 / 16)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), help="bf16 on a GPU, fp16 on the CPU")
    parser.add_argument("--splits", type=int, default=None, help="override num_splits")
    parser.add_argument("--kind", choices=["mla", "gqa"], default="mla")
    parser.add_argument("--kv-heads", type=int, default=None, help="GQA kv heads (heads // 4)")
    parser.add_argument("--head-dim", type=int, default=128, help="GQA head dim (128)")
    parser.add_argument(
        "--equal-lengths",
        action="store_true",
        help="plan with every request's length given (--context each), as an eager step "
        "plans; without it the plan is a CUDA graph's, made without lengths",
    )


def _lengths(args: argparse.Namespace) -> list[int] | None:
    """The host lengths the plan is made with: every request --context long, or none (a CUDA
    graph's plan: docs/serving.md). The uniform GQA rules that need equal lengths (the wave
    rule's halving, the pack on one split's grid) apply only with them."""
    return [args.context] * args.batch if args.equal_lengths else None


def _kind_knobs(args: argparse.Namespace) -> dict:
    """plan_decode's GQA arguments, or nothing for MLA."""
    if args.kind == "mla":
        return {}
    # Only a flag left out takes the default: --kv-heads 0 goes on to plan_decode's check.
    kv_heads = max(1, args.heads // 4) if args.kv_heads is None else args.kv_heads
    return {"kind": "gqa", "num_kv_heads": kv_heads, "head_dim": args.head_dim}


# `splitkv.bench.ablations` by name (imported only when a bench runs).
ABLATION_CHOICES = (
    "grid_order", "merge", "merge_tile", "pipeline", "schedule", "gqa_schedule", "wide_tile",
    "warp_specialized", "mtp_loop", "loop_piece_cost", "loop_piece_cost_held_out",
    "alternate_piece_cost", "alternate_piece_cost_held_out", "copy_rows", "copy_rows_held_out",
)  # fmt: skip


def _bench_arguments(parser: argparse.ArgumentParser) -> None:
    from splitkv.bench import shapes

    parser.add_argument("--kind", choices=["mla", "gqa"], default="mla")
    parser.add_argument(
        "--heads",
        type=int,
        nargs="+",
        default=None,
        help=f"MLA query heads (default {' '.join(map(str, shapes.STANDARD_HEADS))}; with "
        "--ablation: only its shapes of these heads, default all of them)",
    )
    parser.add_argument(
        "--models",
        nargs="+",
        choices=sorted(shapes.GQA_MODELS),
        default=list(shapes.GQA_MODELS),
        help="GQA models (--kind gqa)",
    )
    parser.add_argument(
        "--context",
        type=int,
        nargs="+",
        default=None,
        help="MLA: 8192 68096 327600; GQA: 4096 32768 131072",
    )
    parser.add_argument(
        "--batch", type=int, nargs="+", default=None, help="MLA: 1 8 16 48 128; GQA: 1 8 32 128 256"
    )
    parser.add_argument("--qlen", type=int, nargs="+", default=[1])
    parser.add_argument("--page-size", type=int, nargs="+", default=None, help="MLA: 64; GQA: 16")
    parser.add_argument("--dtype", choices=sorted(shapes.DTYPES), default="bf16")
    parser.add_argument(
        "--providers",
        default="splitkv,triton-peer,flashinfer,flashmla",
        help="comma-separated: splitkv, splitkv-prefix (the shared-prefix cascade), "
        "triton-peer, flashinfer, flashmla",
    )
    parser.add_argument(
        "--special",
        action="store_true",
        help="BENCH.md's ragged, prefix-boundary, one-long and shared-prefix batches, and "
        "issue 5's mix of 6 prefix groups; with --kind gqa, per model, a ragged and a one-long "
        "batch, 8 x 131,072 sharing 122,880 and the mix",
    )
    parser.add_argument(
        "--labels",
        nargs="+",
        default=None,
        help="with --special: only the batches whose label starts with one of these "
        "(ragged, prefix-boundary, 1x327600, 8x327600, 48 in 6; GQA: ragged, 1x131072, "
        "8x131072, 48 in 6)",
    )
    parser.add_argument(
        "--splits",
        type=int,
        nargs="+",
        default=None,
        help="time splitkv at each of these num_splits (default: its plan)",
    )
    for knob in BENCH_INT_KNOBS:
        parser.add_argument("--" + knob.replace("_", "-"), type=int, default=None)
    parser.add_argument("--grid-order", choices=["split_major", "batch_major"], default=None)
    parser.add_argument(
        "--partial-dtype",
        choices=sorted(PARTIAL_DTYPES),
        default=None,
        help="the partial outputs between the stages (default fp32)",
    )
    parser.add_argument("--schedule", choices=["auto", "uniform", "balanced"], default=None)
    parser.add_argument("--num-programs", type=int, default=None, help="balanced schedule's grid")
    parser.add_argument(
        "--piece-cost", type=int, default=None, help="MLA program loop: schedule units a piece"
    )
    parser.add_argument("--merge-time", action="store_true", help="also time stage 2 alone")
    for knob, text in BENCH_FLAG_KNOBS:
        flag = "--" + knob.replace("_", "-")
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
    parser.add_argument(
        "--ablation",
        choices=ABLATION_CHOICES,
        default=None,
        help="one of the seed's levers on and off over issue 3's ablation shapes",
    )
    parser.add_argument("--rep-ms", type=int, default=100, help="timing window per measurement")
    parser.add_argument("--out", default="benchmarks/results", help="results folder")
    parser.add_argument("--tag", default="bench", help="file name stem of the results")


def ablation_shapes_asked(shapes: list, args: argparse.Namespace) -> list:
    """An ablation's own shapes, narrowed by --heads, --models, --context and --batch where
    given (an ablation's shapes may hold any head count: without --heads, all of them)."""
    return [
        s
        for s in shapes
        if (s.model in args.models if s.kind == "gqa" else not args.heads or s.heads in args.heads)
        and (not args.context or s.context in args.context)
        and (not args.batch or s.batch in args.batch)
    ]


def _bench(args: argparse.Namespace) -> int:
    if not torch.cuda.is_available():
        print("splitkv bench: error: needs a CUDA or ROCm GPU", file=sys.stderr)
        return 2
    from splitkv.bench import shapes
    from splitkv.bench.ablations import ABLATIONS
    from splitkv.bench.report import write_results
    from splitkv.bench.sweep import environment, measure_ceilings, run_shapes

    providers = [p.strip() for p in args.providers.split(",") if p.strip()]
    measure_merge = args.merge_time
    if args.ablation:
        trials, make_shapes, measure_merge = ABLATIONS[args.ablation]
        todo = ablation_shapes_asked(make_shapes(), args)
    elif args.special and args.kind == "gqa":
        todo = [
            shape
            for qlen in args.qlen
            for make in (shapes.gqa_special_shapes, shapes.gqa_prefix_shapes)
            for shape in make(args.models, args.dtype, qlen, *(args.page_size or [16])[:1])
        ]
        todo = shapes.with_labels(todo, args.labels)
        trials = _trials(args)
    elif args.special:
        todo = [
            shape
            for qlen in args.qlen
            for heads in args.heads or shapes.STANDARD_HEADS
            for page_size in args.page_size or [64]
            for shape in shapes.special_shapes(heads, args.dtype, qlen, page_size)
        ]
        todo = shapes.with_labels(todo, args.labels)
        trials = _trials(args)
    elif args.kind == "gqa":
        todo = [
            shape
            for page_size in args.page_size or [16]
            for shape in shapes.gqa_shapes(
                args.models,
                args.context or shapes.GQA_CONTEXTS,
                args.batch or shapes.GQA_BATCHES,
                args.qlen,
                page_size,
                args.dtype,
            )
        ]
        trials = _trials(args)
    else:
        todo = shapes.grid_shapes(
            args.heads or shapes.STANDARD_HEADS,
            args.context or shapes.STANDARD_CONTEXTS,
            args.batch or shapes.STANDARD_BATCHES,
            args.qlen,
            args.page_size or [64],
            args.dtype,
        )
        trials = _trials(args)
    progress = lambda line: print(line, flush=True)
    progress(f"measuring ceilings, then {len(todo)} shapes x {len(providers)} providers")
    ceilings = measure_ceilings()
    progress(
        f"read ceiling {ceilings['read_bytes_per_s'] / 1e12:.2f} TB/s, "
        f"matmul {ceilings['matmul_flops_per_s'] / 1e12:.0f} TFLOP/s"
    )
    result = {"env": environment(), "ceilings": ceilings, "rows": []}

    def save(rows: list[dict]) -> list:
        return write_results({**result, "rows": rows}, args.out, args.tag)

    rows = run_shapes(
        todo,
        providers,
        ceilings,
        trials=trials,
        measure_merge=measure_merge,
        rep_ms=args.rep_ms,
        progress=progress,
        checkpoint=save,
    )
    for path in save(rows):
        progress(f"wrote {path}")
    return 0


def _trials(args: argparse.Namespace) -> list:
    """One splitkv trial per --splits value (or the plan's own count), with the knobs given."""
    from splitkv.bench.sweep import Trial

    names = (*BENCH_INT_KNOBS, *(k for k, _ in BENCH_FLAG_KNOBS), "grid_order", "schedule",
             "num_programs", "piece_cost")  # fmt: skip
    knobs = {k: getattr(args, k) for k in names if getattr(args, k) is not None}
    if args.partial_dtype is not None:
        knobs["partial_dtype"] = PARTIAL_DTYPES[args.partial_dtype]
    if not args.splits:
        return [Trial("default" if not knobs else _describe(knobs), knobs)]
    return [
        Trial(_describe({"num_splits": n, **knobs}), {"num_splits": n, **knobs})
        for n in args.splits
    ]


def _describe(knobs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in knobs.items())


def _tune(args: argparse.Namespace) -> int:
    if not torch.cuda.is_available():
        print("splitkv tune: error: needs a CUDA or ROCm GPU", file=sys.stderr)
        return 2
    from splitkv.bench import shapes
    from splitkv.bench.tuning import run_tune

    gqa = args.kind == "gqa"
    return run_tune(
        args.heads,
        args.context or (shapes.GQA_CONTEXTS if gqa else shapes.STANDARD_CONTEXTS),
        args.batch or (shapes.GQA_BATCHES if gqa else shapes.STANDARD_BATCHES),
        kind=args.kind,
        models=args.models,
        qlens=args.qlen,
        preset=args.preset,
        out_dir=args.out,
        tag=args.tag,
        save=not args.no_save,
        progress=lambda line: print(line, flush=True),
    )


def _plan(args: argparse.Namespace) -> int:
    import splitkv

    if args.device is not None:
        try:
            spec = splitkv.DeviceSpec.preset(args.device)
        except ValueError as error:  # named for the flag, not the preset's argument
            raise ValueError(f"device{str(error).removeprefix('name')}") from None
        device = "meta"
    else:
        spec, device = None, "cuda" if torch.cuda.is_available() else "cpu"
    plan = splitkv.plan_decode(
        args.batch,
        args.context,
        args.heads,
        qlen=args.qlen,
        page_size=args.page_size,
        dtype=DTYPES[args.dtype],
        device=device,
        device_spec=spec,
        num_splits=args.splits,
        seq_lens=_lengths(args),
        **_kind_knobs(args),
    )
    _print_plan(plan)
    return 0


def _run_checked(args: argparse.Namespace):
    """Random inputs of the asked shape, decoded and compared with the reference."""
    import splitkv
    from splitkv.testing import check_against_reference, random_gqa_case, random_mla_case

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = DTYPES[args.dtype]
    lengths = [args.context] * args.batch
    knobs = _kind_knobs(args)
    shape = {"qlen": args.qlen, "page_size": args.page_size, "dtype": dtype, "device": device}
    plan = splitkv.plan_decode(
        args.batch,
        args.context,
        args.heads,
        num_splits=args.splits,
        seq_lens=_lengths(args),
        **shape,
        **knobs,
    )
    if knobs:
        case = random_gqa_case(lengths, args.heads, knobs["num_kv_heads"], args.head_dim, **shape)
        out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True)
        ref_out, ref_lse = splitkv.reference.gqa_decode(*case.args)
    else:
        case = random_mla_case(lengths, args.heads, **shape)
        out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
        ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    error = check_against_reference(out, lse, ref_out, ref_lse)
    return case, plan, out, error


def _check(args: argparse.Namespace) -> int:
    try:
        _, plan, _, error = _run_checked(args)
    except AssertionError as failure:
        print(f"FAIL: {failure}")
        return 1
    print(f"ok: relative error {error:.2e} vs the fp32 reference (num_splits={plan.num_splits})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    import splitkv
    from splitkv.bench.shapes import BenchShape
    from splitkv.timing import cuda_graph_times_us

    where = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU (interpreter)"
    knobs = _kind_knobs(args)
    heads = f"{args.heads} heads"
    if knobs:
        heads = f"{args.heads} q / {knobs['num_kv_heads']} kv heads of {args.head_dim}"
    print(f"splitkv {splitkv.__version__} {args.kind.upper()} decode on {where}")
    print(
        f"shape: batch {args.batch} x context {args.context}, {heads}, "
        f"qlen {args.qlen}, page {args.page_size}, {args.dtype}"
    )
    try:
        case, plan, out, error = _run_checked(args)
    except AssertionError as failure:
        print(f"FAIL against the fp32 reference: {failure}")
        return 1
    _print_plan(plan)
    print(
        f"out {tuple(out.shape)} {str(out.dtype).removeprefix('torch.')}: "
        f"relative error {error:.2e} vs the fp32 reference (limit 2e-2)"
    )
    if torch.cuda.is_available():
        decode = splitkv.gqa_decode if knobs else splitkv.mla_decode
        p20, p50, p80 = cuda_graph_times_us(lambda: decode(*case.args, plan=plan))
        shape = BenchShape(
            args.heads,
            args.context,
            args.batch,
            args.qlen,
            args.page_size,
            args.dtype,
            kind=args.kind,
            kv_heads=knobs.get("num_kv_heads", 1),
            head_dim=args.head_dim if knobs else 576,
        )
        moved = shape.bytes_read
        print(
            f"time (CUDA-graph replay): p50 {p50:.1f} us (p20 {p20:.1f}, p80 {p80:.1f}), "
            f"{moved / p50 / 1e3:.0f} GB/s of KV and q read"
        )
    else:
        print("no GPU: ran in Triton's interpreter (not timed)")
    return 0


def _print_plan(plan) -> None:
    print("plan:")
    for name in (
        "num_splits",
        "grid_order",
        "block_h",
        "num_head_blocks",
        "kv_pack",
        "block_n",
        "split_num_warps",
        "split_num_stages",
        "page_prefetch",
        "latent_chains",
        "kv_tma",
        "dependent_launch",
        "schedule",
        "num_programs",
        "program_loop",
        "piece_cost",
        "whole_pieces",
        "early_start",
        "merge_streams",
        "warp_specialized",
        "keys_as_rows",
        "consumer_groups",
        "alternate_blocks",
        "copy_rows",
        "merge_block_s",
        "merge_d_split",
        "merge_num_warps",
        "merge_rows",
        "merge_long_partials",
        "partial_dtype",
        "device_name",
    ):
        print(f"  {name:16} {getattr(plan, name)}")
    print(f"  {'workspace':16} {plan.workspace!r}")


if __name__ == "__main__":
    sys.exit(main())

"""One decode call per grid order, for a profiler to look at (ncu, compute-sanitizer).

    ncu --clock-control none -k regex:"split|merge" \\
        --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum \\
        python benchmarks/profile_one.py --heads 12 --context 327600 --batch 8 \\
        --shared-prefix 308736 --grid-order split_major batch_major

    # GQA (a model of `splitkv bench --kind gqa`), a ragged batch, plan knobs:
    python benchmarks/profile_one.py --kind gqa --model llama3-70b-tp8 --context 32768 --batch 1
    python benchmarks/profile_one.py --seq-lens 327600 1 4096 --schedule balanced
    python benchmarks/profile_one.py --prefix-mix --schedule uniform  # issue 5's mix
    python benchmarks/profile_one.py --one-long  # 1 x 327,600 beside 47 short (BENCH.md)

Each order runs `--calls` times (default 2): the first call compiles (and is profiled too);
read the last.
"""

import argparse

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, prefix_mix_shape, special_shapes
from splitkv.testing import check_against_reference, random_gqa_case, random_mla_case


def build_case(args, lengths, prefix_groups=()):
    common = {
        "qlen": args.qlen,
        "page_size": args.page_size,
        "dtype": torch.bfloat16,
        "device": "cuda",
        "contiguous": True,
        "spare_pages": 0,
    }
    if args.kind == "gqa":
        heads, kv_heads, head_dim, sinks = GQA_MODELS[args.model]
        case = random_gqa_case(lengths, heads, kv_heads, head_dim, sinks=sinks, **common)
        reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
        plan_shape = {"kind": "gqa", "num_kv_heads": kv_heads, "head_dim": head_dim}
        return case, reference, heads, plan_shape
    case = random_mla_case(lengths, args.heads, shared_prefix=args.shared_prefix,
                           prefix_groups=prefix_groups, **common)  # fmt: skip
    return case, splitkv.reference.mla_decode(*case.args), args.heads, {}


def run_once(case, plan, kind):
    if kind == "gqa":
        return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)
    return splitkv.mla_decode(*case.args, plan=plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["mla", "gqa"], default="mla")
    parser.add_argument("--model", choices=sorted(GQA_MODELS), default="llama3-8b")
    parser.add_argument("--heads", type=int, default=12, help="MLA query heads")
    parser.add_argument("--context", type=int, default=327600)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-lens", type=int, nargs="+", help="a ragged batch instead")
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=None, help="default: 64 MLA, 16 GQA")
    parser.add_argument("--shared-prefix", type=int, default=0)
    parser.add_argument("--prefix-mix", action="store_true",
                        help="issue 5's mix: 48 requests in 6 prefix groups (MLA)")  # fmt: skip
    parser.add_argument("--one-long", action="store_true", help="1 x 327,600 + 47 short (MLA)")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--schedule", choices=["auto", "uniform", "balanced"], default="auto")
    parser.add_argument("--block-n", type=int, default=None)
    parser.add_argument("--kv-pack", type=int, default=None, help="GQA kv heads a program")
    parser.add_argument("--num-stages", type=int, default=None)
    parser.add_argument("--page-prefetch", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--kv-tma", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--program-loop", action=argparse.BooleanOptionalAction, default=None,
                        help="balanced MLA: one program per schedule program")  # fmt: skip
    parser.add_argument("--warp-specialized", action=argparse.BooleanOptionalAction,
                        default=None, help="MLA 64-row tiles: the Gluon stage 1")  # fmt: skip
    parser.add_argument("--consumer-groups", type=int, default=None,
                        help="Gluon keys-as-rows: consumer warpgroups per head block")  # fmt: skip
    parser.add_argument("--grid-order", nargs="+", default=["split_major"])
    parser.add_argument("--bf16-partials", action="store_true",
                        help="partial_dtype=torch.bfloat16 between the stages")  # fmt: skip
    parser.add_argument("--calls", type=int, default=2)
    args = parser.parse_args()
    if args.page_size is None:
        args.page_size = 16 if args.kind == "gqa" else 64
    lengths = args.seq_lens or [args.context] * args.batch
    groups = ()
    if args.one_long:
        one_long = next(s for s in special_shapes(args.heads) if s.label.startswith("1x"))
        lengths = list(one_long.seq_lens)
    if args.prefix_mix:
        mix = prefix_mix_shape(args.heads)
        lengths, groups = list(mix.seq_lens), mix.prefix_groups
    case, (ref_out, ref_lse), heads, plan_shape = build_case(args, lengths, groups)
    for order in args.grid_order:
        plan = splitkv.plan_decode(
            len(lengths), max(lengths), heads, qlen=args.qlen, page_size=args.page_size,
            device="cuda", num_splits=args.splits, grid_order=order, schedule=args.schedule,
            seq_lens=lengths, block_n=args.block_n, num_stages=args.num_stages,
            page_prefetch=args.page_prefetch, **plan_shape,
            partial_dtype=torch.bfloat16 if args.bf16_partials else torch.float32,
            **{k: v for k, v in (("kv_tma", args.kv_tma), ("program_loop", args.program_loop),
                                 ("warp_specialized", args.warp_specialized),
                                 ("consumer_groups", args.consumer_groups),
                                 ("kv_pack", args.kv_pack))
               if v is not None},
        )  # fmt: skip
        for _ in range(args.calls):
            out, lse = run_once(case, plan, args.kind)
        torch.cuda.synchronize()
        error = check_against_reference(out, lse, ref_out, ref_lse)
        print(f"{order}: {plan}\nrelative error {error:.2e}")


if __name__ == "__main__":
    main()

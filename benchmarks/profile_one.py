"""One MLA decode call per grid order, for a profiler to look at (ncu, compute-sanitizer).

    ncu --clock-control none -k regex:"mla_split|merge_splits" \\
        --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum \\
        python benchmarks/profile_one.py --heads 12 --context 327600 --batch 8 \\
        --shared-prefix 308736 --grid-order split_major batch_major

Each order runs twice: the first call compiles (and is profiled too); read the second.
"""

import argparse

import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--context", type=int, default=327600)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=64)
    parser.add_argument("--shared-prefix", type=int, default=0)
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--grid-order", nargs="+", default=["split_major"])
    args = parser.parse_args()
    case = random_mla_case(
        [args.context] * args.batch, args.heads, qlen=args.qlen, page_size=args.page_size,
        dtype=torch.bfloat16, device="cuda", contiguous=True, spare_pages=0,
        shared_prefix=args.shared_prefix,
    )  # fmt: skip
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    for order in args.grid_order:
        plan = splitkv.plan_decode(
            args.batch, args.context, args.heads, qlen=args.qlen, page_size=args.page_size,
            device="cuda", num_splits=args.splits, grid_order=order,
        )  # fmt: skip
        for _ in range(2):
            out, lse = splitkv.mla_decode(*case.args, plan=plan)
        torch.cuda.synchronize()
        error = check_against_reference(out, lse, ref_out, ref_lse)
        print(f"{order}: num_splits {plan.num_splits}, relative error {error:.2e}")


if __name__ == "__main__":
    main()

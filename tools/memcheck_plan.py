"""One MLA decode call with the given plan knobs, for `compute-sanitizer` to watch.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \
        python3 tools/memcheck_plan.py '{"kv_tma": true, "num_stages": 1}' 4097 63

The GPU suite's memcheck subset (tests/gpu_memcheck.py) runs fixed small shapes; this runs the
knobs of one failing trial at the lengths that fail, so the sanitizer names the access.
"""

import json
import sys

import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case


def main() -> None:
    knobs = json.loads(sys.argv[1])
    lengths = [int(n) for n in sys.argv[2:]] or [4097, 63]
    heads = knobs.pop("heads", 16)
    torch.manual_seed(0)
    case = random_mla_case(lengths, heads, dtype=torch.bfloat16, device="cuda")
    max_len = case.page_table.shape[1] * 64
    plan = splitkv.plan_decode(len(lengths), max_len, heads, device="cuda", **knobs)
    print(plan)
    out, lse = splitkv.mla_decode(*case.args, plan=plan)
    torch.cuda.synchronize()
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    print("matches the reference")


if __name__ == "__main__":
    main()

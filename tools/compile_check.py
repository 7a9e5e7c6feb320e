"""Compile every kernel that a set of decode calls launches on a GPU, as Triton's own launch
path compiles it (`JITFunction.run`: the binder's specialisation of each argument, then the
compiler, for that GPU's target), with no GPU: the calls run on CPU tensors under plans made for
the GPU's preset, and each launch compiles without running (`warmup`) through a stand-in driver
that names the target. It answers, on any machine, whether the installed Triton compiles
splitkv's kernels as that GPU's first calls would: Gluon's warp-specialized MLA kernels (Hopper,
Triton 3.6), the Triton split, balanced and merge kernels, the cascade's and merge_states'.

    python tools/compile_check.py                       # the H200 (sm_90), every case
    python tools/compile_check.py --target gfx942       # MI300X; also sm_100, sm_80, gfx950
    python tools/compile_check.py --case "mla 16 heads" --verbose
    PYTHONPATH=/tmp/triton-3.9:src python tools/compile_check.py   # another Triton

One line a case (its launches, how many failed, the kernels), each failure (or with --verbose
each launch) below it, then a summary; the exit status is 1 if any launch failed to compile.
Compiling is all it checks: the numbers are the GPU suite's (tests/, through the device tool).
The cascades' passes are planned inside the call for the CPU device, so they run the Triton
kernels here (their Gluon kernels are the MLA cases').
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "0"  # the real compiler, even without a GPU

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
import splitkv
import splitkv.checks
from splitkv.plan import plan_on_device

CPU = torch.device("cpu")
# Each target's GPU as the planner sees it: a preset, or for the A100 what `DeviceSpec.from_torch`
# reads off an NVIDIA GPU before Hopper (no preset: no dependent launch, bulk copies or wgmma).
TARGETS = {
    "sm_90": (GPUTarget("cuda", 90, 32), splitkv.DeviceSpec.preset("h200")),
    "sm_100": (GPUTarget("cuda", 100, 32), splitkv.DeviceSpec.preset("b200")),
    "sm_80": (GPUTarget("cuda", 80, 32), splitkv.DeviceSpec("a100", 108, 1, 40 << 20, 0.0)),
    "gfx942": (GPUTarget("hip", "gfx942", 64), splitkv.DeviceSpec.preset("mi300x")),
    "gfx950": (GPUTarget("hip", "gfx950", 64), splitkv.DeviceSpec.preset("mi355x")),
}
TARGET, SPEC = TARGETS["sm_90"]  # `main` sets the one asked for
PAGE = 64
DTYPE = torch.bfloat16


class CompileDriver:
    """What `JITFunction.run` asks of the driver before compiling: the device, its stream and
    its target (TARGET). Nothing launches, so nothing else is asked."""

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_current_target(self) -> GPUTarget:
        return TARGET

    def get_active_torch_device(self) -> torch.device:
        return CPU


@contextlib.contextmanager
def compiling_only(records: list) -> Iterator[None]:
    """Every launch compiles instead (`JITFunction.run` with warmup, which Triton's launches and
    Gluon's share) and is recorded as (kernel, its constexprs, seconds, error or None); CPU
    tensors pass the checks (they stand for the GPU's); the stand-in driver is active. All put
    back after."""
    launch = JITFunction.run

    def compile_only(self, *args, grid, warmup, **kwargs):
        constexprs = sum(1 for p in self.params if p.is_constexpr)
        start = time.perf_counter()
        try:
            launch(self, *args, grid=grid, warmup=True, **kwargs)
            error = None
        except Exception as e:  # every failure is a finding
            error = f"{type(e).__name__}: {why(e)}"
        records.append((self.fn.__name__, constexprs, time.perf_counter() - start, error))

    check_backend = splitkv.checks._check_backend
    slots = dict(vars(driver))  # the active driver's slot, unread: without a GPU none exists
    JITFunction.run = compile_only
    splitkv.checks._check_backend = lambda device, allow_cpu: None
    driver.set_active(CompileDriver())
    try:
        yield
    finally:
        vars(driver).update(slots)
        splitkv.checks._check_backend = check_backend
        JITFunction.run = launch


def why(error: Exception) -> str:
    """The error's cause in a line: a CompilationError's message is the kernel's source around
    the failing line, its cause the exception the compiler raised there."""
    cause = error.__cause__ or error
    lines = [line for line in str(cause).splitlines() if line.strip(" ^")]
    return f"{type(cause).__name__}: {lines[-1].strip()[:200]}" if lines else type(cause).__name__


def target_plan(lengths: list[int], heads: int, page: int, dtype: torch.dtype, **kwargs):
    """The target GPU's plan for these lengths (planned on "meta", as for that GPU), on the
    CPU."""
    plan = splitkv.plan_decode(len(lengths), max(lengths), heads, page_size=page, dtype=dtype,
                               device="meta", device_spec=SPEC, seq_lens=lengths,
                               **kwargs)  # fmt: skip
    return plan_on_device(plan, CPU)


def table_and_lengths(lengths: list[int], page: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    columns = -(-max(lengths) // page)
    table = torch.arange(len(lengths) * columns, dtype=torch.int32).view(len(lengths), columns)
    return table, torch.tensor(lengths, dtype=torch.int32), len(lengths) * columns


def mla_call(lengths: list[int], heads: int, qlen: int = 1, page: int = PAGE,
             dtype: torch.dtype = DTYPE, **knobs) -> Callable[[], object]:  # fmt: skip
    table, lens, pages = table_and_lengths(lengths, page)
    q = torch.empty(len(lengths), qlen, heads, 576, dtype=dtype)
    kv = torch.empty(pages, page, 576, dtype=dtype)
    plan = target_plan(lengths, heads, page, dtype, qlen=qlen, **knobs)
    return lambda: splitkv.mla_decode(q, kv, table, lens, plan=plan)


def gqa_call(lengths: list[int], heads: int, kv_heads: int, head_dim: int, qlen: int = 1,
             sinks: bool = False, page: int = PAGE, dtype: torch.dtype = DTYPE,
             **features) -> Callable[[], object]:  # fmt: skip
    table, lens, pages = table_and_lengths(lengths, page)
    q = torch.empty(len(lengths), qlen, heads, head_dim, dtype=dtype)
    k = torch.empty(pages, page, kv_heads, head_dim, dtype=dtype)
    v = torch.empty_like(k)
    window = features.get("window_left", -1)
    plan = target_plan(lengths, heads, page, dtype, qlen=qlen, kind="gqa", num_kv_heads=kv_heads,
                     head_dim=head_dim, window_left=window)  # fmt: skip
    sink = torch.zeros(heads) if sinks else None
    return lambda: splitkv.gqa_decode(q, k, v, table, lens, plan=plan, sinks=sink, **features)


def cascade_call(kind: str) -> Callable[[], object]:
    """8 requests of 4,096 keys sharing 3,072 (MLA 16 heads, or gpt-oss's GQA shape)."""
    lengths = [4096] * 8
    table, lens, pages = table_and_lengths(lengths, PAGE)
    table[:, :48] = table[0, :48]
    groups = [(list(range(8)), 48)]
    if kind == "mla":
        q = torch.empty(8, 1, 16, 576, dtype=DTYPE)
        kv = torch.empty(pages, PAGE, 576, dtype=DTYPE)
        prefix = splitkv.plan_shared_prefix(groups, 8, table.shape[1], PAGE, CPU, num_heads=16,
                                            device_spec=SPEC)  # fmt: skip
        return lambda: splitkv.mla_decode_shared_prefix(q, kv, table, lens, prefix)
    q = torch.empty(8, 1, 64, 64, dtype=DTYPE)
    k = torch.empty(pages, PAGE, 8, 64, dtype=DTYPE)
    prefix = splitkv.plan_shared_prefix(groups, 8, table.shape[1], PAGE, CPU, num_heads=64,
                                        num_kv_heads=8, device_spec=SPEC)  # fmt: skip
    return lambda: splitkv.gqa_decode_shared_prefix(q, k, torch.empty_like(k), table, lens, prefix)


def merge_states_call() -> Callable[[], object]:
    outs, lses = torch.empty(3, 8, 16, 512, dtype=DTYPE), torch.zeros(3, 8, 16)
    return lambda: splitkv.merge_states(outs, lses)


RAGGED = [1, 63, 64, 65, 4096, 4097, 65536, 131072]
ONE_LONG = [131072] + [100 + 85 * i for i in range(47)]
CASES: dict[str, Callable[[], Callable[[], object]]] = {
    "mla 16 heads": lambda: mla_call([4096] * 8, 16),
    "mla 128 heads": lambda: mla_call([4096] * 8, 128),
    "mla 12 heads qlen 4": lambda: mla_call([8192] * 8, 12, qlen=4),
    "mla one split": lambda: mla_call([1024] * 64, 16),
    "mla ragged": lambda: mla_call(RAGGED, 16),
    "mla long batch": lambda: mla_call([65536] * 8, 16),
    "mla balanced triton": lambda: mla_call(ONE_LONG, 16, warp_specialized=False),
    "gqa llama3-8b": lambda: gqa_call([32768] * 8, 32, 8, 128),
    "gqa llama3-8b ragged": lambda: gqa_call(RAGGED, 32, 8, 128),
    "gqa gpt-oss": lambda: gqa_call([4096] * 48, 64, 8, 64, sinks=True),
    "gqa gpt-oss ragged qlen 4": lambda: gqa_call(ONE_LONG, 64, 8, 64, qlen=4, sinks=True),
    "gqa window cap": lambda: gqa_call([8192] * 8, 16, 2, 128, window_left=127, logit_cap=30.0),
    "gqa qwen qlen 8": lambda: gqa_call([16384] * 4, 64, 8, 128, qlen=8),
    "gqa llama3-70b-tp8 one split": lambda: gqa_call([2048] * 48, 8, 1, 128),
    # vLLM's page of 16 at a head dim off a power of two, fp16; SGLang's page of 1 at qlen 3.
    "gqa page 16 head dim 80 fp16": lambda: gqa_call(
        RAGGED[:6], 32, 8, 80, page=16, dtype=torch.float16
    ),
    "mla page 1 qlen 3": lambda: mla_call([700, 2000, 5000], 16, qlen=3, page=1),
    # Pages off a power of two (vLLM's hybrid models): on Hopper the Gluon copies of 16 rows,
    # elsewhere the Triton tiles' key-by-key page ids.
    "mla page 48 qlen 4": lambda: mla_call(ONE_LONG, 12, qlen=4, page=48),
    "gqa page 528 qlen 2": lambda: gqa_call(RAGGED, 32, 8, 128, qlen=2, page=528),
    "mla cascade": lambda: cascade_call("mla"),
    "gqa cascade": lambda: cascade_call("gqa"),
    "merge_states": merge_states_call,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=list(CASES), help="default: all")
    parser.add_argument("--verbose", action="store_true", help="also each variant that compiled")
    parser.add_argument(
        "--target",
        choices=list(TARGETS),
        default="sm_90",
        help="the GPU compiled for, planned as its preset (default: sm_90, H200)",
    )
    args = parser.parse_args()
    global TARGET, SPEC
    TARGET, SPEC = TARGETS[args.target]
    print(f"triton {triton.__version__}, torch {torch.__version__}, splitkv {splitkv.__version__}"
          f", {args.target} ({SPEC.name})")  # fmt: skip
    failed, variants, seconds = 0, 0, 0.0
    for label in args.case or list(CASES):
        records: list = []
        with compiling_only(records):
            try:
                CASES[label]()()
            except Exception as e:  # a call that fails before its kernels
                records.append(("(the call)", 0, 0.0, f"{type(e).__name__}: {e}"))
        bad = [r for r in records if r[3] is not None]
        failed += len(bad)
        variants += len(records)
        seconds += sum(r[2] for r in records)
        names = ", ".join(sorted({r[0] for r in records}))
        print(f"{label:30s} {len(records):2d} launches, {len(bad)} failed: {names}")
        for name, constexprs, took, error in records:
            if error is not None or args.verbose:
                print(f"    {name} ({constexprs} constexprs) {took:6.1f} s  {error or 'ok'}")
    print(f"{variants} launches compiled in {seconds:.0f} s, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

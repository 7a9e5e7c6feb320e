"""Where Triton's own launch path spends the host's time, launch by launch, for the decode
calls of `tools/call_host_time.py` (GPU only: Triton's interpreter takes another path).

    python tools/launch_path_time.py                 # every case
    python tools/launch_path_time.py --case "gqa gpt-oss" --calls 2000

An eager decode call of a small batch costs its host more than its GPU work (docs/perf.md,
session 50: gpt-oss 8 x 4,096 113.5 us a call against 22.1 on the GPU, ~40 us of it a Triton
launch). This records each `JITFunction.run` of one call with a plan, then times the parts of
that run one by one on the recorded arguments, us a launch (best of --repeat rounds):
- run: the whole `kernel[grid](...)`, as splitkv calls it;
- device: the driver's current device and stream;
- binder: the generated binder (arguments bound, each one's specialisation: types, alignment
  of pointers, ints equal to 1 or divisible by 16);
- key: the cache key of that specialisation and the compiled kernel's lookup;
- globals: the check that globals the kernel read at compile time have not changed;
- metadata: the compiled kernel's `launch_metadata` (hooks' view of the launch);
- launcher: the compiled kernel's C launcher on the bound arguments (`cuLaunchKernelEx` and
  the packing of its arguments): what a launch would cost with every check above done once.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from call_host_time import CASES, best_us, decode_calls
from triton import knobs
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction, compute_cache_key


@dataclass
class Launch:
    """One recorded `JITFunction.run`: the kernel, its arguments and its grid."""

    fn: JITFunction
    args: tuple
    kwargs: dict
    grid: object

    @property
    def name(self) -> str:
        return self.fn.fn.__name__


@contextlib.contextmanager
def recorded_launches() -> Iterator[list[Launch]]:
    """Every `JITFunction.run` inside the block, recorded and then run as usual."""
    launches: list[Launch] = []
    run = JITFunction.run

    def recording(self, *args, grid, warmup, **kwargs):
        if not warmup:
            launches.append(Launch(self, args, dict(kwargs), grid))
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)

    JITFunction.run = recording
    try:
        yield launches
    finally:
        JITFunction.run = run


def part_steps(launch: Launch) -> dict[str, Callable[[], object]]:
    """Each part of `JITFunction.run` for this launch as a step of its own, in run's order,
    the later parts on the earlier parts' results (Triton 3.6's run)."""
    fn, args, grid = launch.fn, launch.args, launch.grid
    kwargs = dict(launch.kwargs)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    device = driver.active.get_current_device()
    stream = driver.active.get_current_stream(device)
    kernel_cache, key_cache, _, _, binder = fn.device_caches[device]
    bound, specialization, options = binder(*args, **kwargs)
    key = compute_cache_key(key_cache, specialization, options)
    kernel = kernel_cache[key]
    values = tuple(bound.values())
    grid = grid(bound) if callable(grid) else grid
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    metadata = kernel.launch_metadata(grid, stream, *values)
    hooks = (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook)
    launcher_head = (*grid3, stream, kernel.function, kernel.packed_metadata, metadata, *hooks)

    def globals_check():
        for (name, _), (value, where) in fn.used_global_vals.items():
            if where.get(name) != value:
                raise RuntimeError(f"global {name} changed")

    return {
        "run": lambda: fn.run(*args, grid=launch.grid, warmup=False, **launch.kwargs),
        "device": lambda: driver.active.get_current_stream(driver.active.get_current_device()),
        "binder": lambda: binder(*args, **kwargs),
        "key": lambda: kernel_cache.get(compute_cache_key(key_cache, specialization, options)),
        "globals": globals_check,
        "metadata": lambda: kernel.launch_metadata(grid, stream, *values),
        "launcher": lambda: kernel.run(*launcher_head, *values),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", nargs="*", default=[c[0] for c in CASES],
                        help="cases of tools/call_host_time.py")  # fmt: skip
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("launch_path_time.py times Triton's CUDA launch path: it needs a GPU")
    device = torch.device("cuda")
    names = ["run", "device", "binder", "key", "globals", "metadata", "launcher"]
    print(f"{'case':16s} {'kernel':34s} {'args':>4s} " + " ".join(f"{n:>8s}" for n in names))
    for case in CASES:
        if case[0] not in args.case:
            continue
        with_plan, _ = decode_calls(case, device)
        with_plan()  # compiles, outside the recording
        torch.cuda.synchronize()
        with recorded_launches() as launches:
            with_plan()
        for launch in launches:
            steps = part_steps(launch)
            # Synced after each round: the launcher's steps queue GPU work.
            figures = [best_us(steps[n], device, args.calls, args.repeat) for n in names]
            print(f"{case[0]:16s} {launch.name[:34]:34s} {len(launch.args):4d} "
                  + " ".join(f"{f:8.1f}" for f in figures))  # fmt: skip


if __name__ == "__main__":
    main()

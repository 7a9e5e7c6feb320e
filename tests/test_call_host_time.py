"""tools/call_host_time.py: it times every case, and its stubs leave the kernels as they were."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import torch

import splitkv.gqa
import splitkv.mla
from splitkv.device import on_device

TOOL = Path(__file__).resolve().parents[1] / "tools" / "call_host_time.py"


def _tool():
    spec = importlib.util.spec_from_file_location("call_host_time", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stubs_are_put_back():
    kernels = (splitkv.gqa.gqa_split_kernel, splitkv.mla.merge_splits_kernel)
    with _tool().stubbed_launches():
        assert splitkv.gqa.gqa_split_kernel is not kernels[0]
        assert splitkv.mla.merge_splits_kernel is not kernels[1]
    assert (splitkv.gqa.gqa_split_kernel, splitkv.mla.merge_splits_kernel) == kernels


def test_every_case_is_timed():
    done = subprocess.run([sys.executable, str(TOOL), "--calls", "3", "--repeat", "1"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-1000:]
    assert len(done.stdout.strip().splitlines()) == 1 + len(_tool().CASES)


def test_no_device_switch_off_cuda():
    with on_device(torch.device("cpu")) as entered:
        assert entered is None

"""tools/call_host_time.py: it times every case, and its stubs leave the kernels as they were;
and `splitkv.device.on_device`, the launches' device switch, which is skipped where the tensors
are on the current device (part of the host time the tool measures)."""

import contextlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import torch

import splitkv.gqa
import splitkv.mla
from splitkv.device import on_device
from splitkv.warp_specialized import gluon_available

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
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 + len(_tool().CASES) + 1  # header, the cases, the descriptors
    gluon = "pool " if gluon_available() else "none "  # Triton 3.6's Gluon kernels only
    assert lines[-1].startswith("gluon descriptors: " + gluon)


def test_no_device_switch_off_cuda():
    with on_device(torch.device("cpu")) as entered:
        assert entered is None


def test_device_switch_only_off_the_current_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    assert isinstance(on_device(torch.device("cuda", 0)), contextlib.nullcontext)
    switch = on_device(torch.device("cuda", 1))  # built, not entered: no GPU needed
    assert isinstance(switch, torch.cuda.device) and switch.idx == 1

"""Where the tests run: the GPU when there is one, else Triton's interpreter on the CPU.

The interpreter's tl.dot is wrong on bfloat16 operands (it multiplies raw bits), so the CPU runs
float16 and float32; the GPU runs bfloat16 and float16.
"""

import importlib.util
import os
from pathlib import Path

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

ON_GPU = torch.cuda.is_available()
DEVICE = torch.device("cuda" if ON_GPU else "cpu")
DTYPES = [torch.bfloat16, torch.float16] if ON_GPU else [torch.float16, torch.float32]


@pytest.fixture
def device() -> torch.device:
    return DEVICE


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def dtype(request) -> torch.dtype:
    return request.param


@pytest.fixture(scope="session")
def load_tool():
    """Import a script of tools/ by its name (tools/ is not a package), for tests of its
    arithmetic."""

    def load(name: str):
        path = Path(__file__).resolve().parents[1] / "tools" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


def pytest_collection_modifyitems(config, items):
    from splitkv.warp_specialized import GLUON_TRITON, triton_release

    if triton_release() != GLUON_TRITON:
        # Other Triton releases plan the Triton kernels and compile to other registers.
        skip = pytest.mark.skip(reason=f"pinned to Triton {GLUON_TRITON[0]}.{GLUON_TRITON[1]}")
        for item in items:
            if "triton_3_6" in item.keywords:
                item.add_marker(skip)
    if ON_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA/ROCm GPU (run through the device tool)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

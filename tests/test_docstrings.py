"""The `>>>` examples in the public docstrings, and the code of docs/serving.md, run as written
(kernels on the interpreter here, on the GPU there)."""

import doctest
import importlib
import re
from pathlib import Path

import pytest

MODULES = [
    "splitkv.device",
    "splitkv.partition",
    "splitkv.plan",
    "splitkv.mla",
    "splitkv.gqa",
    "splitkv.prefix_gqa",
    "splitkv.merge",
    "splitkv.schedule",
    "splitkv.host_lengths",
    "splitkv.bench.shapes",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_serving_guide_code_runs():
    guide = Path(__file__).resolve().parents[1] / "docs" / "serving.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, str(guide), "exec"), {})

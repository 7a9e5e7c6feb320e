"""The `>>>` examples in the public docstrings run as written (kernels on the interpreter here,
on the GPU there)."""

import doctest
import importlib

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
    "splitkv.bench.shapes",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

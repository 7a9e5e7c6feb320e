"""tests/gpu_memcheck.py's parts (the memcheck subset runs on a GPU only, each part as its own
sanitizer process: tools/memcheck.sh): every case function is a part, so a case added without
a PARTS entry cannot drop out of the subset unseen, and the list the script prints is PARTS."""

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

SUBSET = Path(__file__).resolve().parent / "gpu_memcheck.py"


@pytest.fixture(scope="module")
def subset():
    spec = importlib.util.spec_from_file_location("gpu_memcheck", SUBSET)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_case_function_is_a_part(subset):
    # A case takes only the device; the helpers take the case's inputs as well.
    cases = {
        name
        for name, function in inspect.getmembers(subset, inspect.isfunction)
        if function.__module__ == subset.__name__
        and list(inspect.signature(function).parameters) == ["dev"]
    }
    assert cases == {function.__name__ for function in subset.PARTS.values()}


def test_the_list_is_the_parts(subset):
    listed = subprocess.run([sys.executable, str(SUBSET), "--list"], capture_output=True,
                            text=True, check=True).stdout.split()  # fmt: skip
    assert listed == list(subset.PARTS)


def test_an_unknown_part_names_the_parts(subset):
    with pytest.raises(SystemExit, match="unknown parts \\['bogus'\\]; the parts: mla_pages"):
        subset.main(["bogus"])

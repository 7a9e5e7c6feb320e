"""The tools import the splitkv that PYTHONPATH names, else the checkout's (tools/checkout_src.py):
an A/B of a variant tree (`PYTHONPATH=/tmp/NAME/src`) must not measure the default instead."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
# What a tool does before importing splitkv, then which splitkv came.
IMPORTS_SPLITKV = (
    f"import sys; sys.path.insert(0, {str(TOOLS)!r}); "
    "from checkout_src import SRC, behind_pythonpath; "
    "sys.path.insert(behind_pythonpath(), SRC); "
    "import splitkv; print(splitkv.__file__)"
)


def splitkv_imported(pythonpath: str | None) -> Path:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-c", IMPORTS_SPLITKV], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return Path(done.stdout.strip()).resolve()


def test_the_checkouts_src_without_pythonpath():
    assert splitkv_imported(None) == ROOT / "src" / "splitkv" / "__init__.py"


def test_a_variant_named_by_pythonpath_wins(tmp_path):
    variant = tmp_path / "variant" / "src"
    (variant / "splitkv").mkdir(parents=True)
    (variant / "splitkv" / "__init__.py").write_text("")
    other = tmp_path / "elsewhere"  # a second entry: the variant need not be the last one
    other.mkdir()
    pythonpath = os.pathsep.join([str(variant), str(other)])
    assert splitkv_imported(pythonpath) == variant / "splitkv" / "__init__.py"


def test_no_tool_puts_src_first_itself():
    """Every tool goes through checkout_src (a tool's own `sys.path.insert(0, .../src)` would
    shadow PYTHONPATH again)."""
    own = [
        path.name
        for path in sorted(TOOLS.glob("*.py"))
        if path.name != "checkout_src.py" and '/ "src"' in path.read_text()
    ]
    assert own == []

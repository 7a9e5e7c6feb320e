"""Where the tools put this checkout's src/ on sys.path: behind the trees PYTHONPATH names.

A tool run as `python tools/X.py` imports splitkv from the checkout it sits in, ahead of an
installed splitkv, unless PYTHONPATH names another tree: `PYTHONPATH=/tmp/variant/src python
tools/inspect_merge.py` then compiles the variant's kernels. (Tools that put their own src/
first ignored PYTHONPATH: session 76 reported a variant's register count that was the
default's.) Each tool, after putting this folder on sys.path:

    from checkout_src import SRC, behind_pythonpath
    sys.path.insert(behind_pythonpath(), SRC)
"""

import os
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def behind_pythonpath() -> int:
    """The sys.path index just past the last entry PYTHONPATH put there (0 where none is: no
    PYTHONPATH, or `python -I`, which ignores it)."""
    named = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    on_path = [i for i, entry in enumerate(sys.path) if entry and os.path.abspath(entry) in named]
    return max(on_path, default=-1) + 1

"""Put the Triton peer (SGLang's `decode_attention.py`) where the benchmarks load it from,
`.peers/sglang_decode_attention.py` (git-ignored: no peer code is committed), taken out of
SGLang's pure-Python wheel; the device runs `bench --providers triton-peer` with `.peers`
carried (docs/gpu.md).

    python tools/extract_triton_peer.py                      # pip downloads sglang 0.5.2
    python tools/extract_triton_peer.py --wheel sglang-0.5.2-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MEMBER = "sglang/srt/layers/attention/triton_ops/decode_attention.py"
ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / ".peers" / "sglang_decode_attention.py"
VERSION = "0.5.2"  # the peer the committed figures ran (docs/gpu.md)


def extract(wheel: Path, target: Path = TARGET) -> Path:
    """The peer's file from `wheel`, written to `target`."""
    with zipfile.ZipFile(wheel) as archive:
        if MEMBER not in archive.namelist():
            raise ValueError(f"--wheel: {wheel} holds no {MEMBER}")
        source = archive.read(MEMBER)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source)
    return target


def downloaded_wheel(folder: Path, version: str) -> Path:
    """SGLang's wheel, without its dependencies, by pip (the machine's index)."""
    subprocess.run([sys.executable, "-m", "pip", "download", f"sglang=={version}", "--no-deps",
                    "--quiet", "-d", str(folder)], check=True)  # fmt: skip
    (wheel,) = folder.glob("sglang-*.whl")
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="a downloaded sglang wheel (else pip's)")
    parser.add_argument("--version", default=VERSION, help="the sglang release pip takes")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        wheel = args.wheel or downloaded_wheel(Path(folder), args.version)
        try:
            print(extract(wheel))
        except (OSError, ValueError, zipfile.BadZipFile) as error:
            print(f"extract_triton_peer: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

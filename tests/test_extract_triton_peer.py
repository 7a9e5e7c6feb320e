"""tools/extract_triton_peer.py: the peer's one file out of an SGLang wheel, into `.peers/`."""

import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from extract_triton_peer import MEMBER, extract, main


def test_the_peer_file_comes_out_of_the_wheel(tmp_path):
    wheel = tmp_path / "sglang-0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(MEMBER, "def decode_attention_fwd(): ...\n")
        archive.writestr("sglang/__init__.py", "")
    target = extract(wheel, tmp_path / ".peers" / "peer.py")
    assert target.read_text() == "def decode_attention_fwd(): ...\n"


def test_a_wheel_without_it_is_an_error(tmp_path, capsys):
    wheel = tmp_path / "other.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("other/__init__.py", "")
    assert main(["--wheel", str(wheel)]) == 1
    assert "holds no sglang/srt" in capsys.readouterr().err

"""tools/ab_summary.py: a gqa_plan_ab run's rows as one line each, against a base variant."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from ab_summary import main, summary_line

ROW = {
    "batch": "gpt-oss 1 48 32768",
    "error planned": 0.00251,
    "planned": [1106.4, 1108.0],
    "plan planned": ["uniform", 1, 16, 128, 2, True, 1],
    "error p2": 0.00244,
    "p2": [1041.0, 1040.4],
    "plan p2": ["uniform", 2, 16, 64, 2, False, 2],
}


def test_each_variant_against_the_base():
    line = summary_line(ROW, "planned")
    assert line.startswith("gpt-oss 1 48 32768")
    assert "planned   1106.4 err 2.5e-03" in line
    assert "p2   1040.4 ( -6.0%) err 2.4e-03" in line
    assert "( +6.3%)" in summary_line(ROW, "p2")  # planned against p2
    assert "['uniform', 2, 16, 64, 2, False, 2]" in summary_line(ROW, "planned", plans=True)


def test_a_base_that_is_not_a_variant_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="--base: 'v65'"):
        summary_line(ROW, "v65")
    path = tmp_path / "ab.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    assert main([str(path)]) == 0
    assert main([str(path), "--base", "v65"]) == 1
    assert "--base: 'v65'" in capsys.readouterr().err

"""The `splitkv` command on small shapes (the interpreter on the CPU, else the GPU)."""

import pytest

from splitkv.cli import main


def test_demo_runs_checks_and_prints_the_plan(capsys):
    assert main(["demo", "--batch", "2", "--context", "100", "--heads", "4"]) == 0
    printed = capsys.readouterr().out
    assert "num_splits" in printed and "relative error" in printed


@pytest.mark.triton_3_6
def test_plan_for_a_preset_allocates_nothing(capsys):
    assert (
        main(["plan", "--batch", "8", "--context", "327600", "--heads", "12", "--device", "h200"])
        == 0
    )
    printed = capsys.readouterr().out
    # 12 heads on the H200: the keys-as-rows Gluon kernel, one program per SM (16 x 8 = 128).
    assert "num_splits       16" in printed and "split_major" in printed
    assert "warp_specialized True" in printed


@pytest.mark.parametrize("splits", ["1", "5"])
def test_check_passes(splits, capsys):
    argv = [
        "check",
        "--batch",
        "2",
        "--context",
        "77",
        "--heads",
        "3",
        "--qlen",
        "4",
        "--splits",
        splits,
    ]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("ok: relative error")


def test_bad_input_is_an_error_not_a_traceback(capsys):
    assert main(["check", "--context", "2", "--qlen", "4", "--heads", "2"]) == 2
    assert "seq_lens: expected" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--kind", "gqa", "--kv-heads", "0"], "num_kv_heads: expected"),  # not the default
        (["--device", "nosuch"], "device: expected one of"),  # the flag, not "name"
    ],
)
def test_plan_names_its_bad_flags(argv, message, capsys):
    assert main(["plan", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["bench", "tune"])
def test_gpu_commands_say_they_need_a_gpu(command, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main([command]) == 2
    assert "needs a CUDA or ROCm GPU" in capsys.readouterr().err


def test_gqa_demo_and_check(capsys):
    argv = [
        "--kind",
        "gqa",
        "--batch",
        "2",
        "--context",
        "60",
        "--heads",
        "8",
        "--kv-heads",
        "2",
        "--head-dim",
        "64",
    ]
    assert main(["demo", *argv]) == 0
    assert "GQA decode" in capsys.readouterr().out
    assert main(["check", *argv, "--qlen", "3"]) == 0
    assert main(["plan", *argv, "--device", "h200"]) == 0


def test_plan_shows_packed_kv_heads(capsys):
    # gpt-oss at qlen 1 on the H200: two kv heads a stage-1 program (splitkv/gqa_pack.py).
    argv = ["plan", "--kind", "gqa", "--batch", "8", "--context", "131072", "--heads", "64",
            "--kv-heads", "8", "--head-dim", "64", "--device", "h200"]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  kv_pack          2" in lines, lines


def test_plan_with_equal_lengths_plans_as_an_eager_step(capsys):
    # gpt-oss 48 x 32,768 on the H200 preset: without lengths a CUDA graph's plan (balanced
    # from two requests, v0.2.65); with them the uniform rules, packed on 2 splits (v0.2.66).
    argv = ["plan", "--kind", "gqa", "--batch", "48", "--context", "32768", "--heads", "64",
            "--kv-heads", "8", "--head-dim", "64", "--device", "h200"]  # fmt: skip
    assert main(argv) == 0
    assert "  schedule         balanced" in capsys.readouterr().out.splitlines()
    assert main([*argv, "--equal-lengths"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for line in ("  schedule         uniform", "  num_splits       2", "  kv_pack          2"):
        assert line in lines, lines
    # check decodes the same equal lengths it plans for (the interpreter's small shape).
    assert main(["check", "--kind", "gqa", "--heads", "8", "--kv-heads", "2", "--head-dim",
                 "64", "--equal-lengths"]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("ok: relative error")

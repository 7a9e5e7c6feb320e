"""The benchmark harness end to end on the CPU: the real providers, checks, merge timing and
report writing, with the GPU-only pieces (device queries, graph timing, ceilings) stood in."""

import types

import pytest
import torch

import splitkv
from splitkv.bench import sweep
from splitkv.bench.ablations import ABLATIONS
from splitkv.bench.report import write_results
from splitkv.bench.shapes import BenchShape, gqa_batch
from splitkv.bench.sweep import Trial, run_shapes
from splitkv.device import DeviceSpec


@pytest.fixture
def cpu_harness(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("the GPU runs the real harness")
    props = types.SimpleNamespace(L2_cache_size=1 << 16, name="cpu", multi_processor_count=2)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a: props)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(sweep, "DEVICE", "cpu")
    calls = []

    def fake_times(fn, rep_ms=100):
        fn()
        calls.append(fn)
        return 10.0, 12.0, 14.0

    monkeypatch.setattr(sweep, "cuda_graph_times_us", fake_times)
    return calls


def test_harness_runs_checks_and_reports(cpu_harness, tmp_path):
    shapes = [
        BenchShape(4, 100, 2, dtype="fp16", page_size=16),
        BenchShape(4, 96, 3, dtype="fp16", page_size=16, shared_prefix=64, label="shared"),
        BenchShape(
            8, 70, 2, dtype="fp16", page_size=16, kind="gqa", kv_heads=2, head_dim=64, sinks=True
        ),
        BenchShape(  # two prefix groups and a request in none (issue 5's mix, small)
            4,
            80,
            5,
            dtype="fp16",
            page_size=16,
            seq_lens=(80, 70, 50, 40, 30),
            prefix_groups=(((0, 1), 32), ((2, 3), 16)),
            label="groups",
        ),
        BenchShape(  # GQA with a shared prefix and sinks: the GQA cascade
            8,
            70,
            3,
            dtype="fp16",
            page_size=16,
            kind="gqa",
            kv_heads=2,
            head_dim=64,
            sinks=True,
            shared_prefix=48,
            label="gqa shared",
        ),
    ]
    # Two trials a shape: a trial's knobs reach its plan whatever they are (the balanced
    # schedule's own harness rows are the ablations' and the GPU's; a third trial cost ~20 s).
    trials = [
        Trial("default"),
        Trial("serial merge", {"merge_block_s": 1, "merge_d_split": 1}),
    ]
    ceilings = {"read_bytes_per_s": 1e12, "matmul_flops_per_s": 1e14}
    rows = run_shapes(
        shapes,
        ["splitkv", "splitkv-prefix", "flashmla"],
        ceilings,
        trials=trials,
        measure_merge=True,
        progress=lambda line: None,
    )
    mine = [r for r in rows if r["provider"] == "splitkv"]
    assert len(mine) == 10 and all(r["status"] == "ok" for r in mine)
    assert all(
        r["rel_error"] < 2e-2 and r["p50_us"] == pytest.approx(12.0 / r["input_copies"])
        for r in mine
    )
    # The stand-in timer; a GQA plan of one uniform split runs no merge (`whole_pieces`).
    merged = [r for r in mine if "merge_share" in r]
    assert all(r["merge_share"] == pytest.approx(1.0) for r in merged)
    no_merge = [r for r in mine if "merge_share" not in r]
    assert all(r["num_splits"] == 1 and r["schedule"] == "uniform" for r in no_merge), no_merge
    assert mine[2]["unique_bytes"] < mine[2]["bytes_read"]  # the shared shape's default
    assert next(r for r in rows if r["provider"] == "flashmla")["status"].startswith("missing")
    cascade = [r["status"] for r in rows if r["provider"] == "splitkv-prefix"]
    assert cascade[1] == cascade[3] == cascade[4] == "ok" and cascade[0].startswith("unsupported")
    assert cascade[2].startswith("unsupported")  # GQA without sharing
    assert mine[6]["unique_bytes"] == (80 + 70 + 50 + 40 + 30 - 32 - 16 + 5 * 4) * 576 * 2
    paths = write_results(
        {
            "env": {
                "gpu": "cpu",
                "splitkv": "0",
                "torch": "2",
                "triton": "3",
                "cuda": None,
                "command": "test",
            },
            "ceilings": ceilings,
            "rows": rows,
        },
        tmp_path,
        "smoke",
    )
    assert "serial merge" in (tmp_path / "smoke.md").read_text() and paths


def test_tune_sweeps_fits_and_writes_a_table(cpu_harness, tmp_path, monkeypatch):
    import json

    from splitkv.bench import tuning
    from splitkv.device import DeviceSpec

    monkeypatch.setattr(
        tuning, "measure_ceilings", lambda: {"read_bytes_per_s": 1e12, "matmul_flops_per_s": 1e14}
    )
    monkeypatch.setattr(
        tuning,
        "environment",
        lambda: {
            "gpu": "cpu",
            "splitkv": "0",
            "torch": "2",
            "triton": "3",
            "cuda": None,
            "command": "test",
        },
    )
    monkeypatch.setattr(tuning.DeviceSpec, "from_torch", lambda *a: DeviceSpec.preset("h200"))
    monkeypatch.setattr(tuning, "SWEEP_SPLITS", (1, 2))
    assert (
        tuning.run_tune(
            [4],
            [70],
            [1, 2],
            preset="h200",
            out_dir=str(tmp_path),
            tag="t",
            save=False,
            qlens=(2,),
            dtype="fp16",
            progress=lambda line: None,
        )
        == 0
    )
    table = json.loads((tmp_path / "h200.json").read_text())
    assert table["tunables"]["fitted"] and len(table["fit_mla"]["per_shape"]) == 2
    # Each shape's default plan is timed beside the sweep and scored as measured.
    result = json.loads((tmp_path / "t.json").read_text())
    assert [r["variant"] for r in result["rows"]].count("default") == 2
    assert {r["qlen"] for r in result["rows"]} == {2}
    assert len(result["defaults_against_best"]) == 2


def test_launched_waves_sizes_the_balanced_grid_by_its_launched_programs(monkeypatch):
    # Stage 1 launches num_programs + batch programs per head block; the ablation's
    # `launched_waves` asks for that many waves of launched programs.
    from splitkv.bench import providers
    from splitkv.device import DeviceSpec
    from splitkv.testing import random_mla_case

    h200 = DeviceSpec.preset("h200")
    real_plan = splitkv.plan_decode
    plans = []

    def plan_as_h200(*args, **kwargs):
        plans.append(real_plan(*args, **kwargs, device_spec=h200))
        return plans[-1]

    monkeypatch.setattr(splitkv, "plan_decode", plan_as_h200)
    case = random_mla_case([300, 40, 5], 4, page_size=16, dtype=torch.float16, device="cpu")
    for waves, programs in ((1, 264 - 3), (2, 528 - 3)):
        prepared = providers.prepare_splitkv(case, schedule="balanced", launched_waves=waves)
        assert plans[-1].num_programs == programs
        assert prepared.schedule == f"balanced x {programs} programs"
    # MLA's 64-row tile (qlen 4 x 12 heads): a wave is 132 programs, whatever the default grid.
    mtp = random_mla_case([300, 40, 5], 12, qlen=4, page_size=16, dtype=torch.float16,
                          device="cpu")  # fmt: skip
    providers.prepare_splitkv(mtp, schedule="balanced", launched_waves=1)
    assert (plans[-1].block_h, plans[-1].num_programs) == (64, 132 - 3)


def test_a_gqa_models_batch_builds_its_inputs(monkeypatch):
    monkeypatch.setattr(sweep, "DEVICE", "cpu")
    shape = gqa_batch("gpt-oss", [40, 7, 23], qlen=2, dtype="fp16")
    fields = (shape.heads, shape.kv_heads, shape.head_dim, shape.sinks, shape.batch)
    assert fields == (64, 8, 64, True, 3) and shape.context == 40 and shape.page_size == 16
    case = sweep.build_cases(shape)[0]
    assert case.q.shape == (3, 2, 64, 64) and case.q.dtype == torch.float16
    assert case.seq_lens.tolist() == [40, 7, 23] and case.sinks is not None


@pytest.mark.parametrize("kind", ["mla", "gqa"])
@pytest.mark.parametrize("num_splits", [1, 3])
def test_stage_one_then_the_merge_is_the_call(kind, num_splits):
    # The bench times stage 1 alone beside the whole call (the merge's added cost): stage 1
    # then the merge, where one follows (not after a GQA split that wrote the output), must
    # be exactly the call.
    from splitkv.gqa import gqa_stage_one
    from splitkv.mla import merge_follows, merge_workspace, mla_stage_one
    from splitkv.testing import random_gqa_case, random_mla_case

    device = "cuda" if torch.cuda.is_available() else "cpu"
    lengths, page = [200, 70, 5], 16
    if kind == "mla":
        case = random_mla_case(lengths, 12, page_size=page, dtype=torch.float16, device=device)
        plan_shape, extra, run_stage_one = {}, {}, mla_stage_one
        decode = splitkv.mla_decode
    else:
        case = random_gqa_case(lengths, 8, 2, 64, sinks=True, page_size=page,
                               dtype=torch.float16, device=device)  # fmt: skip
        plan_shape = {"kind": "gqa", "num_kv_heads": 2, "head_dim": 64}
        extra, run_stage_one, decode = {"sinks": case.sinks}, gqa_stage_one, splitkv.gqa_decode
    max_seq_len = case.page_table.shape[1] * page
    heads = case.q.shape[2]
    plan = splitkv.plan_decode(3, max_seq_len, heads, page_size=page, dtype=torch.float16,
                               device=device, num_splits=num_splits, **plan_shape)  # fmt: skip
    want_out, want_lse = decode(*case.args, plan=plan, **extra)
    out = torch.full_like(want_out, float("nan"))
    lse = torch.full_like(want_lse, float("nan"))
    run_stage_one(*case.args, plan=plan, out=out, lse=lse, **extra)
    assert merge_follows(plan) == (num_splits > 1 or (kind == "mla" and not plan.whole_pieces))
    if merge_follows(plan):
        merge_workspace(plan, case.seq_lens, out, lse, max_seq_len=max_seq_len,
                        whole_pieces=plan.whole_pieces, **extra)  # fmt: skip
    assert torch.equal(out, want_out) and torch.equal(lse, want_lse)


@pytest.mark.parametrize("ablation", sorted(ABLATIONS))
def test_every_ablation_trial_is_a_plan(ablation):
    # A trial whose knobs plan_decode no longer takes would only show as "crashed" rows on the
    # GPU; plan each one for the H200 here (launched_waves is the harness's own knob).
    trials, _, _ = ABLATIONS[ablation]
    for trial in trials:
        knobs = {k: v for k, v in trial.knobs.items() if k != "launched_waves"}
        splitkv.plan_decode(8, 4096, 12, device="meta", device_spec=DeviceSpec.preset("h200"),
                            **knobs)  # fmt: skip


def test_a_windowed_gqa_call_is_planned_and_decoded_with_its_window(monkeypatch):
    # gpt-oss's alternate layers attend the last 128 keys: the bench's run takes the window
    # to the plan and the call, and times the call whole (the stages alone take no window).
    from splitkv.bench import providers
    from splitkv.testing import check_against_reference

    monkeypatch.setattr(sweep, "DEVICE", "cuda" if torch.cuda.is_available() else "cpu")
    case = sweep.build_cases(gqa_batch("gpt-oss", [40, 7, 23], dtype="fp16"))[0]
    prepared = providers.prepare_splitkv(case, window_left=9)
    assert prepared.stage1_run is None and prepared.merge_run is None
    prepared.run()
    out, lse = prepared.result()
    reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks, window_left=9)
    check_against_reference(out, lse, *reference)
    mla = sweep.build_cases(BenchShape(16, 64, 2, page_size=16, dtype="fp16"))[0]
    with pytest.raises(providers.Unsupported, match="GQA"):
        providers.prepare_splitkv(mla, window_left=9)


def test_graph_timing_waits_for_the_callers_queued_work(monkeypatch):
    # Triton times fn on a stream of its own: work still queued on the caller's stream must be
    # done first (session 55's device-side index assert: a race with a case's cache fill).
    import triton.testing

    from splitkv.timing import cuda_graph_times_us

    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: calls.append("synchronize"))
    monkeypatch.setattr(
        triton.testing,
        "do_bench_cudagraph",
        lambda fn, rep, quantiles: calls.append("timed") or [0.001, 0.002, 0.003],
    )
    assert cuda_graph_times_us(lambda: None) == (1.0, 2.0, 3.0)
    assert calls == ["synchronize", "timed"]

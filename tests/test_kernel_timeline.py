"""tools/kernel_timeline.py's arithmetic on a made-up trace and made-up merge stamps (the tool
itself needs a GPU): which stage 1 pairs with which merge, and what the medians say."""

import pytest
import torch


@pytest.fixture(scope="module")
def timeline(load_tool):
    return load_tool("kernel_timeline")


def test_calls_pair_each_stage_one_with_the_merge_after_it(timeline):
    stage1, merge = "mla_warp_specialized_kernel", "merge_splits_kernel"
    kernels = [
        {"name": merge, "start": -3.0, "end": -1.0},  # a merge with no stage 1 of its own
        {"name": stage1, "start": 0.0, "end": 10.0},
        {"name": merge, "start": 1.0, "end": 13.0},
        {"name": stage1, "start": 12.0, "end": 22.0},  # launched early: 1 us before 13
        {"name": merge, "start": 13.0, "end": 26.0},
    ]
    calls = timeline.calls_of(kernels)
    assert [c["stage1"]["start"] for c in calls] == [0.0, 12.0]
    summary = timeline.summary(calls)
    assert summary["calls"] == 2
    assert summary["merge_after_stage1"] == 3.5  # median of 3 and 4
    assert summary["next_stage1_start_before_merge_end"] == 1.0
    assert summary["next_stage1_end_after_merge_end"] == 9.0
    assert summary["period"] == 13.0


def test_merge_stamps_measure_from_the_first_wait_end(timeline):
    # ns: start, wait's end, end; the last program returned early (no end stamp)
    times = torch.tensor([[1000, 5000, 6000], [2000, 5100, 7000], [6000, 6000, 9000],
                          [6500, 6500, 0]])  # fmt: skip
    summary = timeline.merge_stamp_summary([times, times])
    assert summary["started_before"] == 0.5 and summary["programs"] == 4
    assert summary["last_start"] == 1.5 and summary["last_end"] == 4.0
    assert summary["run_max"] == 3.0
    tail = timeline.merge_tail(times, d_split=2, count=2)
    assert [(t["program"], t["slice"], t["end"]) for t in tail] == [(1, 0, 4.0), (0, 1, 2.0)]

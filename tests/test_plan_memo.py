"""Plans without lengths are remembered (splitkv/plan_memo.py): the same knobs come back with a
fresh workspace, bad arguments are still refused, and plans with lengths are made each time."""

import pytest
import torch

import splitkv
from splitkv import plan as plan_module
from splitkv.plan_memo import MAX_REMEMBERED

H200 = splitkv.DeviceSpec.preset("h200")


def _fields(plan):
    return {k: v for k, v in vars(plan).items() if k != "workspace"}


@pytest.mark.parametrize("kind", ["mla", "gqa"])
def test_a_shape_planned_again_gets_its_knobs_and_a_workspace_of_its_own(kind):
    shape = {"kind": kind, "num_kv_heads": 8, "head_dim": 64} if kind == "gqa" else {}
    first = splitkv.plan_decode(8, 4096, 64, device="cpu", **shape)
    again = splitkv.plan_decode(8, 4096, 64, device="cpu", **shape)
    assert _fields(first) == _fields(again)
    for name in ("partial_o", "partial_lse"):
        mine, its = getattr(first.workspace, name), getattr(again.workspace, name)
        assert (mine.shape, mine.dtype, mine.device) == (its.shape, its.dtype, its.device)
        assert mine.data_ptr() != its.data_ptr()  # never shared between calls


def test_forgotten_plans_equal_remembered_ones():
    remembered = splitkv.plan_decode(32, 65536, 16, device="meta", device_spec=H200)
    splitkv.plan_decode.forget()
    made = splitkv.plan_decode(32, 65536, 16, device="meta", device_spec=H200)
    assert _fields(remembered) == _fields(made)


@pytest.mark.parametrize(
    "bad",
    [{"qlen": True}, {"page_size": 64.0}, {"num_splits": 2.0}, {"kind": "gqa", "head_dim": 72}],
)
def test_bad_arguments_are_refused_after_good_ones(bad):
    good = {"qlen": 1, "page_size": 64, "num_splits": 2}
    splitkv.plan_decode(8, 4096, 16, device="meta", device_spec=H200, **good)
    with pytest.raises((TypeError, ValueError)):
        splitkv.plan_decode(8, 4096, 16, device="meta", device_spec=H200, **{**good, **bad})


def test_plans_with_lengths_are_made_each_time(monkeypatch):
    made = []
    real = plan_module.host_lengths  # read by every plan the body makes

    def counted(*args):
        made.append(args)
        return real(*args)

    monkeypatch.setattr(plan_module, "host_lengths", counted)
    splitkv.plan_decode.forget()
    for _ in range(2):
        splitkv.plan_decode(3, 4096, 16, device="meta", device_spec=H200, seq_lens=[100, 3000, 70])
    assert len(made) == 2
    for _ in range(2):
        splitkv.plan_decode(3, 4096, 16, device="meta", device_spec=H200)
    assert len(made) == 3


def test_the_memory_is_bounded():
    splitkv.plan_decode.forget()
    for batch in range(1, MAX_REMEMBERED + 20):
        splitkv.plan_decode(batch, 1024, 16, device="meta", device_spec=H200)
    cells = [c.cell_contents for c in splitkv.plan_decode.__closure__ if isinstance(
        c.cell_contents, dict)]  # fmt: skip
    assert len(cells) == 1 and len(cells[0]) == MAX_REMEMBERED


def test_a_device_spec_of_other_figures_plans_anew():
    small = splitkv.DeviceSpec(name="small", compute_units=8, l2_domains=1, l2_bytes=0,
                               hbm_bytes_per_s=0.0)  # fmt: skip
    big = splitkv.plan_decode(2, 65536, 16, device="meta", device_spec=H200)
    few = splitkv.plan_decode(2, 65536, 16, device="meta", device_spec=small)
    assert few.device_name == "small" and few.num_splits < big.num_splits


def test_the_current_device_is_resolved_before_the_lookup():
    plan = splitkv.plan_decode(4, 2048, 16)
    assert plan.device == (torch.device("cuda", torch.cuda.current_device())
                           if torch.cuda.is_available() else torch.device("cpu"))  # fmt: skip


def test_threads_planning_at_once_all_get_their_plans():
    from concurrent.futures import ThreadPoolExecutor

    def plan(batch):
        return splitkv.plan_decode(batch, 1024, 16, device="meta", device_spec=H200).batch_size

    with ThreadPoolExecutor(8) as pool:
        batches = [1 + i % (MAX_REMEMBERED + 50) for i in range(3000)]
        assert list(pool.map(plan, batches)) == batches

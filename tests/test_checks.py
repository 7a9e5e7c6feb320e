"""Every bad argument raises ValueError or TypeError naming it, before anything is launched."""

import pytest
import torch

import splitkv
import splitkv.mla
from splitkv.checks import MAX_PAGE_SIZE
from splitkv.testing import random_mla_case


@pytest.fixture
def case(device):
    return random_mla_case(
        [40, 9], num_heads=4, qlen=2, page_size=16, dtype=torch.float16, device=device
    )


@pytest.fixture(autouse=True)
def no_launch(monkeypatch):
    """A check that lets a bad call through to the kernels fails the test."""

    def launched(*args, **kwargs):
        raise AssertionError("a kernel was launched")

    monkeypatch.setattr(splitkv.mla, "_launch", launched)


def call(case, **overrides):
    args = {
        "q": case.q,
        "kv_cache": case.kv_cache,
        "page_table": case.page_table,
        "seq_lens": case.seq_lens,
    }
    kwargs = {k: overrides.pop(k) for k in list(overrides) if k not in args}
    args.update(overrides)
    return splitkv.mla_decode(*args.values(), **kwargs)


BAD_CALLS = {
    # name: (overrides given the case, error type, the argument the message names)
    "q not a tensor": (lambda c: {"q": c.q.tolist()}, TypeError, "q"),
    "q wrong rank": (lambda c: {"q": c.q[0]}, ValueError, "q"),
    "q int dtype": (lambda c: {"q": c.q.to(torch.int32)}, TypeError, "q"),
    "q wrong head dim": (lambda c: {"q": c.q[..., :512]}, ValueError, "q"),
    "q qlen 9": (lambda c: {"q": c.q[:, :1].expand(-1, 9, -1, -1)}, ValueError, "q"),
    "q 129 heads": (lambda c: {"q": c.q[:, :, :1].expand(-1, -1, 129, -1)}, ValueError, "q"),
    "q last dim strided": (
        lambda c: {"q": c.q.repeat_interleave(2, -1)[..., ::2]},
        ValueError,
        "q",
    ),
    "kv dtype differs": (lambda c: {"kv_cache": c.kv_cache.float()}, TypeError, "kv_cache"),
    "kv wrong rank": (lambda c: {"kv_cache": c.kv_cache[0]}, ValueError, "kv_cache"),
    "kv 4d with 2 heads": (
        lambda c: {"kv_cache": c.kv_cache.unsqueeze(2).expand(-1, -1, 2, -1)},
        ValueError,
        "kv_cache",
    ),
    "kv wrong head dim": (lambda c: {"kv_cache": c.kv_cache[..., :575]}, ValueError, "kv_cache"),
    "page size 0": (
        lambda c: {"kv_cache": c.kv_cache[:, :0]},
        ValueError,
        "kv_cache",
    ),
    "table int64": (lambda c: {"page_table": c.page_table.long()}, TypeError, "page_table"),
    "table batch mismatch": (lambda c: {"page_table": c.page_table[:1]}, ValueError, "page_table"),
    "table rank 1": (lambda c: {"page_table": c.page_table[0]}, ValueError, "page_table"),
    "seq_lens int64": (lambda c: {"seq_lens": c.seq_lens.long()}, TypeError, "seq_lens"),
    "seq_lens batch mismatch": (lambda c: {"seq_lens": c.seq_lens[:1]}, ValueError, "seq_lens"),
    "scale zero": (lambda c: {"scale": 0.0}, ValueError, "scale"),
    "scale negative": (lambda c: {"scale": -1.0}, ValueError, "scale"),
    "scale nan": (lambda c: {"scale": float("nan")}, ValueError, "scale"),
    "scale string": (lambda c: {"scale": "0.1"}, TypeError, "scale"),
    "out wrong shape": (
        lambda c: {"out": torch.empty(2, 2, 4, 576, dtype=c.q.dtype, device=c.q.device)},
        ValueError,
        "out",
    ),
    "out wrong dtype": (
        lambda c: {"out": torch.empty(2, 2, 4, 512, device=c.q.device)},
        TypeError,
        "out",
    ),
    "lse wrong dtype": (
        lambda c: {"lse": torch.empty(2, 2, 4, dtype=torch.float16, device=c.q.device)},
        TypeError,
        "lse",
    ),
    "lse wrong shape": (lambda c: {"lse": torch.empty(2, 4, device=c.q.device)}, ValueError, "lse"),
    "plan not a plan": (lambda c: {"plan": {"num_splits": 4}}, TypeError, "plan"),
    "plan other heads": (
        lambda c: {
            "plan": splitkv.plan_decode(
                2, 64, 8, qlen=2, page_size=16, dtype=torch.float16, device=c.q.device
            )
        },
        ValueError,
        "plan",
    ),
    "plan too few requests": (
        lambda c: {
            "plan": splitkv.plan_decode(
                1, 64, 4, qlen=2, page_size=16, dtype=torch.float16, device=c.q.device
            )
        },
        ValueError,
        "plan",
    ),
    "plan other dtype": (
        lambda c: {
            "plan": splitkv.plan_decode(
                2, 64, 4, qlen=2, page_size=16, dtype=torch.float32, device=c.q.device
            )
        },
        ValueError,
        "plan",
    ),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_argument_is_named(name, case):
    overrides, error, argument = BAD_CALLS[name]
    with pytest.raises(error, match=rf"^{argument}: expected"):
        call(case, **overrides(case))


def test_a_page_size_past_the_largest_is_refused(device):
    case = random_mla_case([40], num_heads=2, page_size=64, dtype=torch.float16, device=device)
    kv = torch.zeros(1, MAX_PAGE_SIZE + 1, 576, dtype=torch.float16, device=device)
    bounds = rf"\[1, {MAX_PAGE_SIZE}\], got {MAX_PAGE_SIZE + 1}$"
    with pytest.raises(ValueError, match=rf"^kv_cache: expected a page size .* {bounds}"):
        splitkv.mla_decode(case.q, kv, case.page_table, case.seq_lens)


BAD_DATA = {
    "seq_len past the table": (lambda c: {"seq_lens": c.seq_lens + 100}, "seq_lens"),
    "negative seq_len": (lambda c: {"seq_lens": c.seq_lens - 41}, "seq_lens"),
    "seq_len under qlen": (lambda c: {"seq_lens": torch.ones_like(c.seq_lens)}, "seq_lens"),
    "page id past the pool": (
        lambda c: {
            "page_table": c.page_table.index_fill(
                1, torch.tensor([0], device=c.q.device), c.kv_cache.shape[0]
            )
        },
        "page_table",
    ),
    "negative page id": (lambda c: {"page_table": c.page_table - 1000}, "page_table"),
}


@pytest.mark.parametrize("name", list(BAD_DATA))
def test_validate_checks_device_data(name, case):
    overrides, argument = BAD_DATA[name]
    with pytest.raises(ValueError, match=rf"^{argument}: expected"):
        call(case, validate=True, **overrides(case))


def test_unused_table_entries_are_not_validated(case, monkeypatch):
    # Entries past a request's pages may hold anything (the caller's padding).
    table = case.page_table.clone()
    table[1, -1] = -1
    launched = []
    monkeypatch.setattr(splitkv.mla, "_launch", lambda *a, **k: launched.append(True))
    call(case, page_table=table, validate=True)
    assert launched


def test_cpu_tensors_need_the_interpreter(case, monkeypatch):
    if case.q.is_cuda:
        pytest.skip("CPU-only check")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match=r"^q: expected a CUDA or ROCm tensor"):
        call(case)


@pytest.fixture
def gqa_case(device):
    from splitkv.testing import random_gqa_case

    return random_gqa_case([30, 9], 4, 2, 64, page_size=16, dtype=torch.float16, device=device)


def gqa_call(case, **overrides):
    args = {
        "q": case.q,
        "k_cache": case.k_cache,
        "v_cache": case.v_cache,
        "page_table": case.page_table,
        "seq_lens": case.seq_lens,
    }
    kwargs = {k: overrides.pop(k) for k in list(overrides) if k not in args}
    args.update(overrides)
    return splitkv.gqa_decode(*args.values(), **kwargs)


BAD_GQA_CALLS = {
    "head dim 72": (
        lambda c: {"q": torch.zeros(2, 1, 4, 72, dtype=c.q.dtype, device=c.q.device)},
        ValueError,
        "q",
    ),
    "q 1025 heads": (lambda c: {"q": c.q[:, :, :1].expand(-1, -1, 1025, -1)}, ValueError, "q"),
    "k head dim differs": (lambda c: {"k_cache": c.k_cache[..., :32]}, ValueError, "k_cache"),
    "kv heads do not divide": (
        lambda c: {"k_cache": c.k_cache[:, :, :1].expand(-1, -1, 3, -1)},
        ValueError,
        "k_cache",
    ),
    "v shape differs": (lambda c: {"v_cache": c.v_cache[:, :8]}, ValueError, "v_cache"),
    "v dtype differs": (lambda c: {"v_cache": c.v_cache.float()}, TypeError, "v_cache"),
    "k rank 3": (lambda c: {"k_cache": c.k_cache[:, :, 0]}, ValueError, "k_cache"),
    "window -2": (lambda c: {"window_left": -2}, ValueError, "window_left"),
    "window float": (lambda c: {"window_left": 4.0}, TypeError, "window_left"),
    "cap negative": (lambda c: {"logit_cap": -1.0}, ValueError, "logit_cap"),
    "cap string": (lambda c: {"logit_cap": "5"}, TypeError, "logit_cap"),
    "sinks per kv head": (
        lambda c: {"sinks": torch.zeros(2, device=c.q.device)},
        ValueError,
        "sinks",
    ),
    "sinks fp16": (
        lambda c: {"sinks": torch.zeros(4, dtype=torch.float16, device=c.q.device)},
        TypeError,
        "sinks",
    ),
    "mla plan": (
        lambda c: {
            "plan": splitkv.plan_decode(
                2, 64, 4, page_size=16, dtype=torch.float16, device=c.q.device
            )
        },
        ValueError,
        "plan",
    ),
}


@pytest.mark.parametrize("name", list(BAD_GQA_CALLS))
def test_bad_gqa_argument_is_named(name, gqa_case, monkeypatch):
    import splitkv.gqa

    monkeypatch.setattr(splitkv.gqa, "_launch", lambda *a, **k: pytest.fail("launched"))
    overrides, error, argument = BAD_GQA_CALLS[name]
    with pytest.raises(error, match=rf"^{argument}: expected"):
        gqa_call(gqa_case, **overrides(gqa_case))

"""Seeded random cases against the fp32 reference (or, for `merge_states`, its formula), on the
CPU's interpreter or a GPU: each target draws shapes, lengths and knobs, decodes, and checks.
A failing case prints what it drew; the ones found so far are tests now.

    python tools/fuzz_reference.py gqa --count 400 --seed 2
    python tools/fuzz_reference.py gqa-prefix mla-prefix --count 150 --seed 3

Targets: gqa, mla (plain decodes over packs, windows, caps, sinks, split counts and balanced grids,
page sizes 1-100, powers of two or not); gqa-prefix, mla-prefix (the shared-prefix cascade over
random groupings, members ending inside their prefix included); gqa-replay, mla-replay (a plan
made for expected lengths or, a third of the time, none, as a CUDA graph's; then three calls of
other lengths up to its table, as graph replays run); gqa-prefix-plan, mla-prefix-plan (the same for
`plan_shared_prefix(seq_lens=)`); merge (`merge_states`: 1-70 states, 0-3 row dimensions, -inf
states); gqa-bad, mla-bad (one argument spoiled: refused with a TypeError/ValueError naming an
argument, or decoded as the reference decodes it); plan-memo (`plan_decode` without lengths over
random shapes, knobs and spoiled arguments: a remembered plan, and one made again after `forget()`,
equal the first in every knob and workspace shape, and an argument refused once is refused every
time, even after a call whose arguments equal it in value). Lengths are 0 or at least qlen, as the
contract asks.
"""

import argparse
import random
import re
import sys
import time

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
import plan_random_snapshot  # this folder's, beside this tool
import torch

import splitkv  # without a GPU it turns Triton's interpreter on before any kernel is made
from splitkv.gqa_pack import kv_pack_for
from splitkv.testing import check_against_reference, random_gqa_case, random_mla_case

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# The interpreter's bf16 dot is wrong (README): the CPU draws fp16 and fp32.
DTYPES = [torch.bfloat16, torch.float16] if DEVICE == "cuda" else [torch.float16, torch.float32]


def lengths_of(rng: random.Random, count: int, qlen: int, choices) -> list[int]:
    """`count` lengths drawn from `choices` (callables), each 0 or at least qlen."""
    drawn = [rng.choice(choices)() for _ in range(count)]
    return [n if n == 0 or n >= qlen else qlen for n in drawn]


def valid_packs(kv: int, group_rows: int, head_dim: int) -> list[int]:
    packs = []
    for pack in (2, 4):
        try:
            kv_pack_for(pack, "gqa", kv, group_rows, head_dim)
            packs.append(pack)
        except ValueError:
            pass
    return packs


def gqa_shape(rng: random.Random, qlen: int) -> tuple[int, int, int]:
    """(q heads, kv heads, head dim)."""
    kv = rng.choice([1, 2, 4])
    return kv * rng.choice([1, 2, 3, 4, 8]), kv, rng.choice([16, 32, 48, 64, 80, 128])


def split_knobs(rng: random.Random) -> dict:
    r = rng.random()
    if r < 0.4:
        return {"num_splits": rng.randint(1, 9)}
    if r < 0.6:
        return {"schedule": "balanced", "num_programs": rng.randint(1, 7)}
    if r < 0.75:
        return {"schedule": "balanced"}  # the planner's own grid (without lengths: a graph's)
    return {}


def long_partials_knobs(rng: random.Random, knobs: dict, rows: int) -> None:
    """A third of balanced plans get the merge sized by partials (kernels/merge_by_length.py;
    the interpreter's default leaves it off) with 1-8 rows a program dividing `rows`."""
    if knobs.get("schedule") == "balanced" and rng.random() < 0.33:
        knobs["merge_long_partials"] = rng.choice([1, 2, 4])
        knobs["merge_rows"] = rng.choice([r for r in (1, 2, 4, 8) if rows % r == 0])


def decode_gqa(case, plan, features):
    out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True, **features)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args, **features))


def decode_mla(case, plan):
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


def fuzz_gqa(rng: random.Random, seed: int, drawn: dict) -> None:
    qlen, page = rng.choice([1, 1, 2, 3, 4]), rng.choice([1, 2, 4, 16, 32, 64, 3, 24, 100])
    heads, kv, dim = gqa_shape(rng, qlen)
    lens = lengths_of(rng, rng.randint(1, 3), qlen, [lambda: 0, lambda: 1, lambda: qlen,
                      lambda: rng.randint(0, 200), lambda: rng.randint(100, 400)])  # fmt: skip
    dtype = rng.choice(DTYPES)
    features = {}
    if rng.random() < 0.3:
        features["window_left"] = rng.randint(0, 100)
    if rng.random() < 0.3:
        features["logit_cap"] = rng.choice([5.0, 30.0])
    sinks = rng.random() < 0.3
    knobs = split_knobs(rng)
    packs = valid_packs(kv, heads // kv * qlen, dim)
    if packs and rng.random() < 0.5:
        knobs["kv_pack"] = rng.choice(packs)
    drawn.update(heads=heads, kv=kv, dim=dim, qlen=qlen, page=page, lens=lens, dtype=dtype,
                 features=features, sinks=sinks, knobs=knobs)  # fmt: skip
    case = random_gqa_case(lens, heads, kv, dim, qlen=qlen, page_size=page, dtype=dtype,
                           device=DEVICE, sinks=sinks, seed=seed)  # fmt: skip
    plan = splitkv.plan_decode(len(lens), max(max(lens), 1), heads, qlen=qlen, page_size=page,
                               dtype=dtype, kind="gqa", num_kv_heads=kv, head_dim=dim,
                               device=DEVICE, **knobs)  # fmt: skip
    decode_gqa(case, plan, {**features, **({"sinks": case.sinks} if sinks else {})})


def fuzz_mla(rng: random.Random, seed: int, drawn: dict) -> None:
    heads, qlen = rng.choice([1, 2, 12, 16, 20, 33, 64]), rng.choice([1, 1, 2, 3, 4])
    page = rng.choice([1, 2, 16, 64, 3, 48, 100])
    lens = lengths_of(rng, rng.randint(1, 4), qlen, [lambda: 0, lambda: qlen,
                      lambda: rng.randint(0, 150), lambda: rng.randint(60, 300)])  # fmt: skip
    dtype, knobs = rng.choice(DTYPES), split_knobs(rng)
    if rng.random() < 0.3:
        knobs["grid_order"] = "batch_major"
    if rng.random() < 0.2:
        knobs["merge_block_s"] = rng.choice([1, 2, 4])
    if rng.random() < 0.2:
        knobs["partial_dtype"] = torch.bfloat16
    long_partials_knobs(rng, knobs, heads * qlen)
    drawn.update(heads=heads, qlen=qlen, page=page, lens=lens, dtype=dtype, knobs=knobs)
    case = random_mla_case(lens, heads, qlen=qlen, page_size=page, dtype=dtype, device=DEVICE,
                           seed=seed)  # fmt: skip
    plan = splitkv.plan_decode(len(lens), max(max(lens), 1), heads, qlen=qlen, page_size=page,
                               dtype=dtype, device=DEVICE, **knobs)  # fmt: skip
    decode_mla(case, plan)


def random_groups(rng: random.Random, batch: int, page: int, most_pages: int) -> list:
    """Disjoint groups of 1-4 requests, each (members, shared tokens)."""
    requests = list(range(batch))
    rng.shuffle(requests)
    groups = []
    while requests and rng.random() < 0.8:
        size = rng.randint(1, min(4, len(requests)))
        members, requests = sorted(requests[:size]), requests[size:]
        pages = rng.randint(0, most_pages) if page > 1 else rng.randint(0, 10 * most_pages)
        groups.append((members, pages * page))
    return groups


def prefix_lengths(rng: random.Random, batch: int, qlen: int, page: int, groups) -> list[int]:
    """Lengths around each request's prefix: past it, ending inside it, or unrelated."""
    lens = []
    for r in range(batch):
        shared = max([t for m, t in groups if r in m], default=0)
        n = rng.choice([shared + rng.randint(0, 90), max(0, shared - rng.randint(0, 2 * page)),
                        shared + qlen - 1, rng.randint(0, 120)])  # fmt: skip
        lens.append(n if n == 0 or n >= qlen else qlen)
    return lens


def fuzz_prefix(kind: str, rng: random.Random, seed: int, drawn: dict) -> None:
    qlen, page, batch = rng.choice([1, 1, 2, 3]), rng.choice([1, 4, 16, 3, 12]), rng.randint(1, 6)
    groups = random_groups(rng, batch, page, 6)
    lens = prefix_lengths(rng, batch, qlen, page, groups)
    # A group's prefix must fit its members' tables: at least as wide as its pages.
    columns = max([-(-n // page) for n in lens] + [t // page for _, t in groups]) + 1
    dtype = rng.choice(DTYPES)
    call_groups = [(m, t // page) for m, t in groups]
    drawn.update(qlen=qlen, page=page, lens=lens, groups=groups, dtype=dtype)
    if kind == "gqa":
        kv = rng.choice([1, 2, 4])
        heads, dim, sinks = kv * rng.choice([1, 2, 4, 8]), rng.choice([32, 64]), rng.random() < 0.3
        features = {"logit_cap": 7.0} if rng.random() < 0.3 else {}
        drawn.update(heads=heads, kv=kv, dim=dim, sinks=sinks, features=features)
        case = random_gqa_case(lens, heads, kv, dim, qlen=qlen, page_size=page, dtype=dtype,
                               device=DEVICE, sinks=sinks, prefix_groups=groups,
                               table_columns=columns, seed=seed)  # fmt: skip
        features = {**features, **({"sinks": case.sinks} if sinks else {})}
        out, lse = splitkv.gqa_decode_shared_prefix(*case.args, call_groups, validate=True,
                                                    **features)  # fmt: skip
        want = splitkv.reference.gqa_decode(*case.args, **features)
    else:
        heads = rng.choice([1, 4, 12, 16])
        drawn.update(heads=heads)
        case = random_mla_case(lens, heads, qlen=qlen, page_size=page, dtype=dtype,
                               device=DEVICE, prefix_groups=groups, table_columns=columns,
                               seed=seed)  # fmt: skip
        out, lse = splitkv.mla_decode_shared_prefix(*case.args, call_groups, validate=True)
        want = splitkv.reference.mla_decode(*case.args)
    check_against_reference(out, lse, *want)


def fuzz_replay(kind: str, rng: random.Random, seed: int, drawn: dict) -> None:
    qlen, page, batch = rng.choice([1, 2, 3]), rng.choice([1, 16, 32, 48]), rng.randint(1, 4)
    width = rng.randint(1, 20) * page if page > 1 else rng.randint(10, 300)
    # A third of the plans are made without lengths, as a CUDA graph's is (docs/serving.md).
    hint = [rng.randint(qlen, width) for _ in range(batch)] if rng.random() < 0.67 else None
    knobs, dtype = split_knobs(rng), rng.choice(DTYPES)
    shape = {}
    if kind == "gqa":
        kv = rng.choice([1, 2, 4])
        heads, dim = kv * rng.choice([1, 2, 4, 8]), rng.choice([32, 64])
        packs = valid_packs(kv, heads // kv * qlen, dim)
        if packs and rng.random() < 0.4:
            knobs["kv_pack"] = rng.choice(packs)
        shape = {"kind": "gqa", "num_kv_heads": kv, "head_dim": dim}
    else:
        heads = rng.choice([1, 4, 16])
        long_partials_knobs(rng, knobs, heads * qlen)
    drawn.update(heads=heads, qlen=qlen, page=page, width=width, hint=hint, knobs=knobs, **shape)
    plan = splitkv.plan_decode(batch, width, heads, qlen=qlen, page_size=page, dtype=dtype,
                               seq_lens=hint, device=DEVICE, **shape, **knobs)  # fmt: skip
    columns = -(-width // page)
    for call in range(3):
        lens = lengths_of(rng, rng.randint(1, batch), qlen, [lambda: 0, lambda: qlen,
                          lambda: rng.randint(qlen, width)])  # fmt: skip
        drawn[f"call {call}"] = lens
        if kind == "gqa":
            case = random_gqa_case(lens, heads, kv, dim, qlen=qlen, page_size=page, dtype=dtype,
                                   device=DEVICE, table_columns=columns, seed=seed)  # fmt: skip
            decode_gqa(case, plan, {})
        else:
            case = random_mla_case(lens, heads, qlen=qlen, page_size=page, dtype=dtype,
                                   device=DEVICE, table_columns=columns, seed=seed)  # fmt: skip
            decode_mla(case, plan)


def fuzz_prefix_plan(kind: str, rng: random.Random, seed: int, drawn: dict) -> None:
    qlen, page, batch = rng.choice([1, 2]), rng.choice([4, 16, 12]), rng.randint(2, 6)
    groups = [(m, max(t, page)) for m, t in random_groups(rng, batch, page, 4)]
    columns = max([t // page for _, t in groups], default=0) + 8
    hint = prefix_lengths(rng, batch, qlen, page, groups) if rng.random() < 0.7 else None
    if hint:
        columns = max(columns, max(-(-n // page) for n in hint) + 1)
    dtype = rng.choice(DTYPES)
    shape = {"num_heads": rng.choice([2, 4, 16]), "qlen": qlen}
    if kind == "gqa":
        kv = rng.choice([1, 2])
        shape = {"num_heads": kv * rng.choice([2, 4, 8]), "qlen": qlen, "num_kv_heads": kv}
    drawn.update(groups=groups, hint=hint, columns=columns, dtype=dtype, **shape)
    plan = splitkv.plan_shared_prefix([(m, t // page) for m, t in groups], batch, columns, page,
                                      DEVICE, seq_lens=hint, **shape)  # fmt: skip
    for call in range(3):
        lens = [min(n, columns * page) for n in prefix_lengths(rng, batch, qlen, page, groups)]
        drawn[f"call {call}"] = lens
        if kind == "gqa":
            case = random_gqa_case(lens, shape["num_heads"], kv, 32, qlen=qlen, page_size=page,
                                   dtype=dtype, device=DEVICE, prefix_groups=groups,
                                   table_columns=columns, seed=seed)  # fmt: skip
            out, lse = splitkv.gqa_decode_shared_prefix(*case.args, plan, validate=True)
            want = splitkv.reference.gqa_decode(*case.args)
        else:
            case = random_mla_case(lens, shape["num_heads"], qlen=qlen, page_size=page,
                                   dtype=dtype, device=DEVICE, prefix_groups=groups,
                                   table_columns=columns, seed=seed)  # fmt: skip
            out, lse = splitkv.mla_decode_shared_prefix(*case.args, plan, validate=True)
            want = splitkv.reference.mla_decode(*case.args)
        check_against_reference(out, lse, *want)


def fuzz_merge(rng: random.Random, seed: int, drawn: dict) -> None:
    generator = torch.Generator().manual_seed(seed)
    states, dim = rng.choice([1, 2, 3, 5, 17, 70]), rng.choice([1, 3, 16, 64, 100, 512])
    rows = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
    dtype = rng.choice([torch.float16, torch.float32, torch.bfloat16])
    outs = torch.randn(states, *rows, dim, generator=generator).to(dtype).to(DEVICE)
    lses = (torch.randn(states, *rows, generator=generator) * rng.choice([1, 30, 200])).to(DEVICE)
    empties = rng.random()
    if empties < 0.3:
        lses[torch.rand(lses.shape, generator=generator).to(DEVICE) < 0.5] = float("-inf")
    elif empties < 0.4:
        lses[:] = float("-inf")
    listed = rng.random() < 0.3
    drawn.update(states=states, rows=rows, dim=dim, dtype=dtype, empties=empties, listed=listed)
    out, lse = splitkv.merge_states(list(outs) if listed else outs, list(lses) if listed else lses)
    want_lse = torch.logsumexp(lses.double(), 0)
    weights = torch.exp(lses.double() - want_lse).nan_to_num(0.0)  # all -inf: no weight
    want_out = (weights[..., None] * outs.double()).sum(0)
    assert not torch.isnan(out).any(), "out holds NaN"
    assert torch.equal(torch.isneginf(lse), torch.isneginf(want_lse)), "-inf rows differ"
    finite = torch.isfinite(want_lse)
    torch.testing.assert_close(lse[finite].double(), want_lse[finite], rtol=1e-5, atol=1e-4)
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    scale = max(1.0, want_out.abs().max().item()) if want_out.numel() else 1.0
    error = (out.double() - want_out).abs().max().item() if out.numel() else 0.0
    assert error <= tolerance * scale, f"out error {error:.2e}"


def spoiled(value, rng: random.Random):
    """(what was done, `value` with one thing wrong about it)."""
    how = rng.choice(["dtype", "drop_dim", "add_dim", "noncontiguous", "size", "list", "int",
                      "int64", "float", "empty", "meta", "flipped"])  # fmt: skip
    if how == "dtype":
        return how, value.to(rng.choice([torch.float16, torch.float32, torch.bfloat16,
                                         torch.int32, torch.int64, torch.float64, torch.int8,
                                         torch.bool]))  # fmt: skip
    if how == "drop_dim":
        return how, value.reshape(-1) if value.dim() > 1 else value[0]
    if how == "add_dim":
        return how, value.unsqueeze(rng.randint(0, value.dim()))
    if how == "noncontiguous":
        last = value.dim() - 1
        if value.dim() >= 2:
            return how, value.transpose(0, last).contiguous().transpose(0, last)
        return how, value.repeat_interleave(2)[::2]
    if how == "size":
        axis = rng.randrange(value.dim())
        index = [slice(None)] * value.dim()
        index[axis] = slice(0, max(0, value.shape[axis] - 1))
        return how, value[tuple(index)]
    return how, {
        "list": lambda: value.tolist(),
        "int": lambda: 3,
        "int64": lambda: value if value.is_floating_point() else value.long(),
        "float": lambda: value.float(),
        "empty": lambda: value[:0],
        "meta": lambda: value.to("meta"),
        "flipped": lambda: value.flip(-1),
    }[how]()


def fuzz_bad(kind: str, rng: random.Random, seed: int, drawn: dict) -> None:
    lens = [rng.randint(1, 60) for _ in range(rng.randint(1, 3))]
    if kind == "gqa":
        case = random_gqa_case(lens, 4, 2, 32, page_size=16, device=DEVICE, seed=seed)
        names, decode = ["q", "k_cache", "v_cache", "page_table", "seq_lens"], splitkv.gqa_decode
        reference = splitkv.reference.gqa_decode
    else:
        case = random_mla_case(lens, 2, page_size=16, device=DEVICE, seed=seed)
        names, decode = ["q", "kv_cache", "page_table", "seq_lens"], splitkv.mla_decode
        reference = splitkv.reference.mla_decode
    args = list(case.args)
    which = rng.randrange(len(args))
    how, args[which] = spoiled(args[which], rng)
    scale = {}
    if rng.random() < 0.2:
        scale["scale"] = rng.choice([0.0, -1.0, float("nan"), float("inf"), "x", True, 1])
    drawn.update(argument=names[which], how=how, **scale)
    try:
        out, lse = decode(*args, validate=rng.random() < 0.5, **scale)
    except (TypeError, ValueError) as error:
        named = str(error).split(":")[0]
        assert re.fullmatch(r"[a-z_]+", named), f"refused without naming an argument: {error}"
        return
    want = reference(*args, **scale)
    if not torch.isnan(want[0]).any():  # poisoned pages in, NaN out: nothing to compare
        check_against_reference(out, lse, *want)


def fuzz_plan_memo(rng: random.Random, seed: int, drawn: dict) -> None:
    # The planner snapshot's random arguments (pinned knobs, refusals), without lengths: those
    # plans are the remembered ones. `record`: every field and workspace tensor, or the refusal.
    args, kwargs = plan_random_snapshot.draw(rng)
    kwargs.pop("seq_lens", None)
    if rng.random() < 0.3:  # the same values as another type: 8.0, True, numpy-free
        name = rng.choice(["qlen", "page_size", "num_splits", "num_programs"])
        kwargs.setdefault(name, 1)
        spoiled_kwargs = {**kwargs, name: rng.choice([float(kwargs[name]), True])}
    else:
        spoiled_kwargs = None
    drawn.update(args=args, kwargs=kwargs, spoiled=spoiled_kwargs)
    planned = plan_random_snapshot.record
    first = planned(args, kwargs)
    assert planned(args, kwargs) == first, "the remembered plan differs"
    splitkv.plan_decode.forget()
    assert planned(args, kwargs) == first, "the plan made again differs"
    if spoiled_kwargs is not None:
        assert isinstance(planned(args, spoiled_kwargs), str), "a spoiled argument planned"
        assert planned(args, kwargs) == first


TARGETS = {
    "gqa": fuzz_gqa,
    "mla": fuzz_mla,
    "gqa-prefix": lambda *a: fuzz_prefix("gqa", *a),
    "mla-prefix": lambda *a: fuzz_prefix("mla", *a),
    "gqa-replay": lambda *a: fuzz_replay("gqa", *a),
    "mla-replay": lambda *a: fuzz_replay("mla", *a),
    "gqa-prefix-plan": lambda *a: fuzz_prefix_plan("gqa", *a),
    "mla-prefix-plan": lambda *a: fuzz_prefix_plan("mla", *a),
    "merge": fuzz_merge,
    "gqa-bad": lambda *a: fuzz_bad("gqa", *a),
    "mla-bad": lambda *a: fuzz_bad("mla", *a),
    "plan-memo": fuzz_plan_memo,
}


def run(target: str, count: int, seed: int) -> int:
    """Cases of `target` failed, of `count`; each failure printed with what it drew."""
    failed, start = 0, time.time()
    for i in range(count):
        drawn: dict = {}
        try:
            TARGETS[target](random.Random(seed * 100_000 + i), i, drawn)
        except Exception as error:  # every failure is a finding: report and go on
            failed += 1
            print(f"FAIL {target} case {i}: {drawn} {type(error).__name__}: {str(error)[:300]}",
                  flush=True)  # fmt: skip
    print(f"{target}: {failed} of {count} failed ({time.time() - start:.0f} s, {DEVICE})")
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", choices=list(TARGETS))
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    failed = sum(run(target, args.count, args.seed) for target in args.targets)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

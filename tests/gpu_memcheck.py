"""A representative subset of MLA decode calls, run under `compute-sanitizer --tool memcheck`.

Not a pytest file: the sanitizer slows every kernel ~100x, so this runs small shapes once, with
corrupt tables and lengths too (clamped in the kernels, so they must not fault either). Run with
PYTORCH_NO_CUDA_MEMORY_CACHING=1, or torch's caching allocator hides out-of-bounds accesses.
"""

import sys
import time

import torch

import splitkv
from splitkv.testing import check_against_reference, random_gqa_case, random_mla_case

STARTED = time.monotonic()
BALANCED_LENGTHS = [1, 63, 64, 65, 4096, 0, 2]  # empty, one-key, page-edge and long requests
RAGGED = [1, 63, 700, 3000, 5]
BAD_LENGTHS = {0: 1 << 30, 1: -4}  # the balanced and Gluon cases' corrupt lengths (`corrupted`)


def reached(part: str) -> None:
    """A line as each part ends, so that a run cut by its time limit says how far it got (the
    sanitizer's cold compiles take most of a run)."""
    print(f"{time.monotonic() - STARTED:.0f} s: {part} done", flush=True)


def corrupted(case, pages: dict, lengths: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Copies of the case's page table and lengths with page ids (`pages`: {(request, column):
    id}) and lengths (`lengths`: {request: length}) past every bound."""
    table = case.page_table.clone()
    for where, page in pages.items():
        table[where] = page
    lens = case.seq_lens.clone()
    for request, length in lengths.items():
        lens[request] = length
    return table, lens


def gqa_decode_corrupt(gqa, plan, pages: dict, lengths: dict) -> None:
    """`gqa.args` decoded with the `corrupted` table and lengths: whatever it returns, it must
    stay within the buffers."""
    table, lens = corrupted(gqa, pages, lengths)
    splitkv.gqa_decode(gqa.q, gqa.k_cache, gqa.v_cache, table, lens, plan=plan)


def mla_decode_corrupt(case, plan, pages: dict, lengths: dict) -> None:
    """`case.args` decoded (MLA) with the `corrupted` table and lengths, as
    `gqa_decode_corrupt`."""
    table, lens = corrupted(case, pages, lengths)
    splitkv.mla_decode(case.q, case.kv_cache, table, lens, plan=plan)


def gqa_default_then_corrupt(lengths: list, heads: tuple, page_size: int, dev: str,
                             expect: dict, pages: dict, corrupt_lengths: dict,
                             qlen: int = 1, preset: str | None = None) -> None:  # fmt: skip
    """A GQA batch (`heads`: q heads, kv heads, head dim) on the planner's default for its
    lengths (on the GPU at hand, or a `preset`'s), whose plan has the fields `expect` names
    and prefetches page ids unless `expect` says otherwise: checked against the reference,
    then decoded with corrupt page ids and lengths (`gqa_decode_corrupt`)."""
    q_heads, kv_heads, dim = heads
    gqa = random_gqa_case(lengths, q_heads, kv_heads, dim, qlen=qlen, page_size=page_size,
                          dtype=torch.bfloat16, device=dev)  # fmt: skip
    spec = None if preset is None else splitkv.DeviceSpec.preset(preset)
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=dim, page_size=page_size,
                               device=dev, seq_lens=lengths, device_spec=spec)  # fmt: skip
    expect = {"page_prefetch": True, **expect}
    assert all(getattr(plan, k) == v for k, v in expect.items()), plan
    out, lse = splitkv.gqa_decode(*gqa.args, plan=plan)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args))
    gqa_decode_corrupt(gqa, plan, pages, corrupt_lengths)


def shared_prefix_then_corrupt(decode, reference, case, groups: list, **kwargs) -> None:
    """A shared-prefix cascade (`decode`, MLA or GQA) on `case` checked against `reference`,
    then with corrupt lengths (request 0 past every bound, request 3 negative): the suffix
    pass's cut lengths and shifted columns must stay clamped."""
    out, lse = decode(*case.args, groups, validate=True, **kwargs)
    check_against_reference(out, lse, *reference(*case.args, **kwargs))
    *inputs, lens = case.args
    lens = lens.clone()
    lens[0] = 1 << 30
    lens[3] = -7
    decode(*inputs, lens, groups, **kwargs)


def default_one_splits(dev: str) -> None:
    """The default one split of short requests (`gqa_one_split_pays`) on the long-split tile,
    each program writing its request's rows: 16 rows at 8 kv heads, 16 rows at one kv head,
    half blocks at 64 rows and in splits of 2 blocks (docs/perf.md sessions 44-45); checked,
    then with corrupt page ids and lengths."""
    one = {"schedule": "uniform", "num_splits": 1, "whole_pieces": True}
    corrupt = ({(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 5: -2})
    gqa_default_then_corrupt([1, 63, 600, 513, 5, 2048, 0, 17] * 2, (64, 8, 64), 16, dev,
                             {**one, "block_n": 128}, *corrupt)  # fmt: skip
    gqa_default_then_corrupt([1, 63, 600, 513, 5, 700, 0, 17, 300, 64] * 10, (8, 1, 128), 16,
                             dev, {**one, "block_n": 64}, *corrupt, qlen=2)  # fmt: skip
    gqa_default_then_corrupt([8, 63, 300, 257, 9, 129, 0, 17, 200] * 2, (64, 8, 64), 16, dev,
                             {**one, "block_n": 64}, *corrupt, qlen=8)  # fmt: skip
    # Half blocks of splits of 2 blocks at 16 rows and at head dim 128 (v0.2.53).
    gqa_default_then_corrupt([1, 63, 190, 129, 5, 150, 0, 17] * 2, (64, 8, 64), 16, dev,
                             {**one, "block_n": 64}, *corrupt)  # fmt: skip
    gqa_default_then_corrupt([8, 140, 139, 33, 9, 96, 0, 17, 120] * 2, (64, 8, 128), 16, dev,
                             {**one, "block_n": 32}, *corrupt, qlen=8)  # fmt: skip


def wide_uniform_tiles(dev: str) -> None:
    """One uniform split of 32 rows (qlen 4 x 8 heads a kv head) writing the output itself, on
    the wide tiles the planner picks (docs/perf.md session 39): 64-key blocks at head dim 64
    with sinks, 128-key blocks on 3 stages at head dim 128; checked, then with corrupt
    lengths and page ids. 60 requests: fewer would fit one wave, where the long-split tile
    takes the split."""
    ragged = [1, 63, 600, 513, 5] * 12
    for (q_heads, kv_heads, dim), expect in [
        ((64, 8, 64), {"block_n": 64, "split_num_stages": 2}),
        ((64, 8, 128), {"block_n": 128, "split_num_stages": 3}),
    ]:
        gqa = random_gqa_case(ragged, q_heads, kv_heads, dim, qlen=4, page_size=16,
                              sinks=dim == 64, dtype=torch.bfloat16, device=dev)  # fmt: skip
        plan = splitkv.plan_decode(len(ragged), max(ragged), q_heads, qlen=4, kind="gqa",
                                   page_size=16, num_kv_heads=kv_heads, head_dim=dim,
                                   device=dev, schedule="uniform", num_splits=1)  # fmt: skip
        assert plan.whole_pieces and all(getattr(plan, k) == v for k, v in expect.items()), plan
        out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, sinks=gqa.sinks)
        reference = splitkv.reference.gqa_decode(*gqa.args, sinks=gqa.sinks)
        check_against_reference(out, lse, *reference)
        gqa_decode_corrupt(gqa, plan, {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 59: -2})


def packed_kv_heads(dev: str) -> None:
    """Two kv heads a program (`kv_pack`, gpt-oss's shape at qlen 1), uniform and balanced,
    with sinks, then with corrupt page ids and lengths: a group's second head reads at its own
    head stride within the same rows."""
    lengths = [1, 63, 600, 513, 5, 2048, 0, 17]
    gqa = random_gqa_case(lengths, 64, 8, 64, page_size=16, sinks=True, dtype=torch.bfloat16,
                          device=dev)  # fmt: skip
    for knobs in ({"num_splits": 3}, {"num_splits": 1}, {"schedule": "balanced"}):
        plan = splitkv.plan_decode(len(lengths), max(lengths), 64, kind="gqa", num_kv_heads=8,
                                   head_dim=64, page_size=16, device=dev, seq_lens=lengths,
                                   kv_pack=2, **knobs)  # fmt: skip
        out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, sinks=gqa.sinks)
        check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args, sinks=gqa.sinks))
        gqa_decode_corrupt(gqa, plan, {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 4: -2})


def merge_by_length_cases(dev: str) -> None:
    """The merge sized by partials (kernels/merge_by_length.py) as the GPU's default plan takes
    it (MLA, more requests than long slots: one long beside short ones, 12 heads x qlen 4),
    then opt-in on GQA with sinks at 8 rows a program; checked, then with corrupt lengths and
    page ids."""
    lengths = [20000, *range(4, 600, 30)]  # qlen 4: at least 4 keys a request
    case = random_mla_case(lengths, 12, qlen=4, page_size=64, dtype=torch.bfloat16, device=dev)
    plan = splitkv.plan_decode(len(lengths), max(lengths), 12, qlen=4, device=dev,
                               seq_lens=lengths, schedule="balanced")  # fmt: skip
    assert plan.merge_long_partials > 0, plan
    out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    mla_decode_corrupt(case, plan, {(0, 3): 1 << 30, (-1, -1): -3}, {0: 1 << 30, -1: -9})
    ragged = RAGGED
    gqa = random_gqa_case(ragged, 64, 8, 64, page_size=16, sinks=True, dtype=torch.bfloat16,
                          device=dev)  # fmt: skip
    plan = splitkv.plan_decode(len(ragged), max(ragged), 64, kind="gqa", page_size=16,
                               num_kv_heads=8, head_dim=64, device=dev, schedule="balanced",
                               merge_rows=8, merge_long_partials=2)  # fmt: skip
    out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, sinks=gqa.sinks)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args, sinks=gqa.sinks))
    gqa_decode_corrupt(gqa, plan, {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 4: -2})


def mla_pages(dev: str) -> None:
    """MLA over pages of 1 to 528 keys at qlen 1 to 4 and 12 to 128 heads: one and 16
    uniform splits, the balanced Triton tile and Gluon loop, checked, then corrupt inputs."""
    for page_size, qlen, heads, lengths in [
        (1, 1, 12, [0, 1, 70, 300]),
        (64, 4, 16, [4, 63, 64, 65, 1000]),
        (256, 2, 20, [2, 255, 256, 257]),
        (16, 1, 128, [33, 500]),
        (64, 1, 12, [1, 63, 65, 700]),  # Hopper: the keys-as-rows kernel, 16 rows
        (16, 2, 16, [2, 17, 300]),  # and 32 rows
        # Pages off a power of two: blocks cross them (Gluon's 16-row copies at 48 and 528,
        # its key rows gathered one by one at 100 and 1, the Triton tile's key-by-key page ids
        # at 1, 48 and 100).
        (48, 2, 16, [2, 47, 48, 49, 700]),
        (100, 1, 12, [1, 99, 100, 101, 500]),
        (528, 4, 16, [4, 527, 529, 1200]),
    ]:
        case = random_mla_case(
            lengths, heads, qlen=qlen, page_size=page_size, dtype=torch.bfloat16, device=dev
        )
        plans = [{"num_splits": 1}, {"num_splits": 16}]
        if page_size in (1, 48, 100):
            # The balanced Triton tile without bulk copies: two chains, no page ids ahead; and
            # the Gluon program loop (gathered rows at 1 and 100).
            plans += [{"schedule": "balanced", "warp_specialized": False},
                      {"schedule": "balanced", "warp_specialized": True}]  # fmt: skip
        if page_size in (1, 100):
            plans.append({"num_splits": 16, "warp_specialized": True})  # gathered, uniform
        for knobs in plans:
            plan = splitkv.plan_decode(
                len(lengths),
                max(lengths) + page_size,
                heads,
                qlen=qlen,
                page_size=page_size,
                device=dev,
                seq_lens=lengths,
                **knobs,
            )
            out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
            check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        # Corrupt inputs, no validate: wrong rows allowed, out-of-bounds accesses not.
        corrupt = ({(0, 0): 1 << 30, (-1, -1): -3}, {0: 1 << 30, -1: -9})
        mla_decode_corrupt(case, None, *corrupt)
        if page_size in (1, 100):  # the same on the Gluon program loop's gathered rows
            gathered = splitkv.plan_decode(len(lengths), max(lengths) + page_size, heads,
                                           qlen=qlen, page_size=page_size, device=dev,
                                           schedule="balanced",
                                           warp_specialized=True)  # fmt: skip
            mla_decode_corrupt(case, gathered, *corrupt)


def gqa_pages(dev: str) -> None:
    """GQA over pages of 1, 16 and 24 keys with a window, a logit cap and sinks, and one split
    writing the output itself; checked, then corrupt inputs."""
    for page_size, qlen, (q_heads, kv_heads, dim) in [
        (1, 1, (8, 1, 128)),
        (16, 3, (64, 8, 64)),
        (24, 2, (32, 8, 128)),  # a page off a power of two
    ]:
        case = random_gqa_case(
            [0, 5, 300],
            q_heads,
            kv_heads,
            dim,
            qlen=qlen,
            page_size=page_size,
            dtype=torch.bfloat16,
            device=dev,
        )
        sinks = torch.randn(q_heads, device=dev)
        out, lse = splitkv.gqa_decode(
            *case.args, validate=True, window_left=40, logit_cap=20.0, sinks=sinks
        )
        ref = splitkv.reference.gqa_decode(*case.args, window_left=40, logit_cap=20.0, sinks=sinks)
        check_against_reference(out, lse, *ref)
        gqa_decode_corrupt(case, None, {(1, 0): -(1 << 30)}, {2: 1 << 30})
        # One split: stage 1 writes the output rows itself (`whole_pieces`).
        one = splitkv.plan_decode(3, 300, q_heads, qlen=qlen, page_size=page_size,
                                  dtype=torch.bfloat16, device=dev, kind="gqa",
                                  num_kv_heads=kv_heads, head_dim=dim, num_splits=1)  # fmt: skip
        out, lse = splitkv.gqa_decode(*case.args, plan=one, validate=True, sinks=sinks)
        check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args, sinks=sinks))
        gqa_decode_corrupt(case, one, {(1, 0): -(1 << 30)}, {2: 1 << 30})


def shared_prefix(dev: str) -> None:
    """The MLA and GQA shared-prefix cascades, checked, then corrupt lengths."""
    # The shared-prefix cascade: stacked rows, shifted suffix tables, a member ending inside
    # its prefix (leading its group: the prefix pass must read a member taking part), a
    # request in no group.
    case = random_mla_case([150, 70, 30, 200, 90], 12, qlen=2, page_size=16, dtype=torch.bfloat16,
                           device=dev, prefix_groups=[([0, 1, 2], 48), ([3], 32)])  # fmt: skip
    shared_prefix_then_corrupt(splitkv.mla_decode_shared_prefix, splitkv.reference.mla_decode,
                               case, [([2, 0, 1], 3), ([3], 2)])  # fmt: skip
    # The GQA cascade: two groups of different prefix lengths (the stacked pass on the
    # balanced schedule, v0.2.32), a member ending inside its prefix, sinks.
    gqa = random_gqa_case([150, 70, 30, 200, 90], 8, 2, 64, qlen=2, page_size=16,
                          dtype=torch.bfloat16, device=dev, sinks=True,
                          prefix_groups=[([0, 1, 2], 48), ([3, 4], 32)])  # fmt: skip
    shared_prefix_then_corrupt(splitkv.gqa_decode_shared_prefix, splitkv.reference.gqa_decode,
                               gqa, [([2, 0, 1], 3), ([3, 4], 2)], sinks=gqa.sinks)  # fmt: skip


def balanced_triton(dev: str) -> None:
    """The balanced Triton plans (one program per piece slot, the program loop with and
    without bulk copies, the merge sized by partials) and merge_streams, checked, then corrupt
    lengths."""
    lengths = BALANCED_LENGTHS
    case = random_mla_case(lengths, 12, page_size=64, dtype=torch.bfloat16, device=dev)
    # The balanced schedule (one program per piece slot) and merge_states, corrupt lengths too.
    for programs in (1, 7, 300):
        plan = splitkv.plan_decode(
            len(lengths), 4160, 12, device=dev, schedule="balanced", num_programs=programs
        )
        out, lse = splitkv.mla_decode(*case.args, plan=plan, validate=True)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        mla_decode_corrupt(case, plan, {}, BAD_LENGTHS)
        # One program per schedule program walking its pieces (program_loop), with TMA too.
        for tma in (False, True):
            walk = splitkv.plan_decode(
                len(lengths), 4160, 12, device=dev, schedule="balanced", num_programs=programs,
                program_loop=True, kv_tma=tma, latent_chains=2,
            )  # fmt: skip
            out, lse = splitkv.mla_decode(*case.args, plan=walk, validate=True)
            check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
            mla_decode_corrupt(case, walk, {}, BAD_LENGTHS)
        # The merge sized by partials (merge_long_partials): requests of more than 2 one row a
        # program, the rest 4 rows a program.
        by_length = splitkv.plan_decode(
            len(lengths), 4160, 12, device=dev, schedule="balanced", num_programs=programs,
            merge_long_partials=2, merge_rows=4,
        )  # fmt: skip
        out, lse = splitkv.mla_decode(*case.args, plan=by_length, validate=True)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        mla_decode_corrupt(case, by_length, {}, BAD_LENGTHS)
    # merge_streams: stage 1's split flags and the merge folding as they go up, on the Gluon
    # and the Triton stage 1, corrupt lengths too (clamped alike in both stages, so the merge
    # waits only for flags stage 1 raises).
    for gluon in (None, False):
        streams = splitkv.plan_decode(len(lengths), 4160, 12, device=dev, num_splits=16,
                                      merge_streams=True, warp_specialized=gluon)  # fmt: skip
        out, lse = splitkv.mla_decode(*case.args, plan=streams, validate=True)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        mla_decode_corrupt(case, streams, {}, BAD_LENGTHS)
        assert not streams.workspace.split_flags.any()


def gluon(dev: str) -> None:
    """The warp-specialized Gluon kernels (Hopper only): the balanced program loop's tiles and
    the uniform kernel's consumers, checked, then corrupt lengths."""
    lengths = BALANCED_LENGTHS
    # The balanced program loop on the warp-specialized Gluon kernels (Hopper): 64-row tiles,
    # and 16, 32 and (opt-in) 64 rows with the keys as rows; then with whole pieces (one-piece
    # requests' rows and lse written by stage 1) and early start (launched as a dependent of
    # the kernel ahead), and whole pieces on the 64-row tile's two warpgroups (opt-in); a
    # 32-row block on two consumer warpgroups (the opt-in); the 64-row tile's alternating
    # consumers (the opt-in), with whole pieces too.
    if torch.cuda.get_device_capability()[0] == 9:
        whole = {"keys_as_rows": True, "whole_pieces": True, "early_start": True}
        for heads, qlen, page_size, knobs in ((128, 1, 8, {}), (16, 4, 64, {}), (12, 1, 16, {}),
                                              (12, 2, 64, {}), (12, 4, 16, {"keys_as_rows": True}),
                                              (12, 1, 16, whole), (12, 2, 64, whole),
                                              (12, 4, 16, whole),
                                              (12, 4, 64, {"whole_pieces": True}),
                                              (12, 4, 16, {"whole_pieces": True,
                                                           "alternate_blocks": True}),
                                              (12, 2, 16, {"consumer_groups": 2}),
                                              (128, 1, 8, {"alternate_blocks": True}),
                                              (12, 4, 64, {"alternate_blocks": True}),
                                              # pages off a power of two
                                              (128, 1, 24, {"alternate_blocks": True}),
                                              (12, 4, 48, {})):  # fmt: skip
            wide = random_mla_case([n and max(n, qlen) for n in lengths], heads, qlen=qlen,
                                   page_size=page_size, dtype=torch.bfloat16,
                                   device=dev)  # fmt: skip
            for programs in (1, 7, 300):
                loop = splitkv.plan_decode(
                    len(lengths), 4160, heads, qlen=qlen, page_size=page_size, device=dev,
                    schedule="balanced", num_programs=programs, warp_specialized=True, **knobs,
                )  # fmt: skip
                out, lse = splitkv.mla_decode(*wide.args, plan=loop, validate=True)
                check_against_reference(out, lse, *splitkv.reference.mla_decode(*wide.args))
                mla_decode_corrupt(wide, loop, {}, BAD_LENGTHS)
        # The uniform kernel's consumers (the 64-row tile's alternating and column-splitting
        # pairs, keys as rows), on one split (each program writes its request's output, no
        # merge) and on 16, corrupt lengths too.
        for heads, qlen, page_size, knobs in ((128, 1, 8, {"alternate_blocks": True}),
                                              (12, 4, 64, {"alternate_blocks": True}),
                                              (128, 1, 8, {"alternate_blocks": False}),
                                              (12, 1, 16, {"warp_specialized": True})):  # fmt: skip
            wide = random_mla_case([n and max(n, qlen) for n in lengths], heads, qlen=qlen,
                                   page_size=page_size, dtype=torch.bfloat16,
                                   device=dev)  # fmt: skip
            for splits in (1, 16):
                turns = splitkv.plan_decode(len(lengths), 4160, heads, qlen=qlen,
                                            page_size=page_size, device=dev, num_splits=splits,
                                            **knobs)  # fmt: skip
                out, lse = splitkv.mla_decode(*wide.args, plan=turns, validate=True)
                check_against_reference(out, lse, *splitkv.reference.mla_decode(*wide.args))
                mla_decode_corrupt(wide, turns, {}, BAD_LENGTHS)


def bulk_copies(dev: str) -> None:
    """Key blocks by bulk tensor copies (kv_tma), the balanced GQA plan with a window, and
    the balanced 16-row GQA default tile over pages of 1 and 256 keys; checked, then corrupt
    inputs."""
    lengths = BALANCED_LENGTHS
    case = random_mla_case(lengths, 12, page_size=64, dtype=torch.bfloat16, device=dev)
    ragged = RAGGED
    # Key blocks by bulk tensor copies (kv_tma): tails, an empty request, corrupt inputs.
    for knobs in (
        {},
        {"page_prefetch": True, "block_n": 32, "num_stages": 3},
        {"schedule": "balanced", "num_programs": 7, "latent_chains": 2},
    ):
        tma = splitkv.plan_decode(len(lengths), 4160, 12, device=dev, kv_tma=True, **knobs)
        out, lse = splitkv.mla_decode(*case.args, plan=tma, validate=True)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
        mla_decode_corrupt(case, tma, {(0, 0): 1 << 30, (-1, -1): -3}, BAD_LENGTHS)
    gqa = random_gqa_case(
        lengths, 32, 8, 128, qlen=1, page_size=16, dtype=torch.bfloat16, device=dev
    )
    plan = splitkv.plan_decode(
        len(lengths),
        4160,
        32,
        kind="gqa",
        num_kv_heads=8,
        head_dim=128,
        page_size=16,
        device=dev,
        schedule="balanced",
    )
    out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, window_left=100)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args, window_left=100))
    # The balanced 16-row GQA default tile (3 stages, page ids a block ahead) over one-key and
    # 256-key pages, then corrupt lengths and page ids.
    for page_size, heads in [(1, (8, 1, 128)), (256, (64, 8, 64))]:
        gqa_default_then_corrupt(ragged, heads, page_size, dev, {"schedule": "balanced"},
                                 {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 4: -2})  # fmt: skip


def gqa_merge_rows(dev: str) -> None:
    """GQA merge programs of several rows, and the long-split and H100 uniform tiles;
    checked, then corrupt inputs."""
    ragged = RAGGED
    # Merge programs of several rows (merge_rows): balanced rows with sinks 8 a program,
    # uniform splits 4 a program; checked, then with corrupt lengths and page ids.
    for (q_heads, kv_heads, dim), knobs in [
        ((64, 8, 64), {"schedule": "balanced", "merge_rows": 8}),
        ((32, 8, 128), {"schedule": "uniform", "num_splits": 4, "merge_rows": 4}),
    ]:
        gqa = random_gqa_case(ragged, q_heads, kv_heads, dim, page_size=16, sinks=True,
                              dtype=torch.bfloat16, device=dev)  # fmt: skip
        plan = splitkv.plan_decode(len(ragged), max(ragged), q_heads, kind="gqa", page_size=16,
                                   num_kv_heads=kv_heads, head_dim=dim, device=dev,
                                   **knobs)  # fmt: skip
        out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, sinks=gqa.sinks)
        reference = splitkv.reference.gqa_decode(*gqa.args, sinks=gqa.sinks)
        check_against_reference(out, lse, *reference)
        gqa_decode_corrupt(gqa, plan, {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 4: -2})
    # Uniform splits on the long-split tile (3 stages, page ids a block ahead; docs/perf.md
    # sessions 29 and 30): one kv head on 256 splits of 512 keys over one-key and 256-key
    # pages, and 8 kv heads on half the planner's splits (4 x 8,192: 8 splits of 16 blocks).
    long_split = {"schedule": "uniform", "split_num_stages": 3}
    for page_size in (1, 256):
        gqa_default_then_corrupt([131072], (8, 1, 128), page_size, dev, long_split,
                                 {(0, 7): 1 << 30, (0, -1): -5}, {0: 1 << 30})  # fmt: skip
    gqa_default_then_corrupt([8192] * 4, (32, 8, 128), 1, dev, {**long_split, "num_splits": 8},
                             {(1, 5): 1 << 30, (3, -1): -5}, {2: 1 << 30})  # fmt: skip
    # The H100 preset's uniform tile at the long-split count (v0.2.69: 128-key blocks, 2
    # stages, no page ids ahead) on 8 splits of 2,048 keys, over 16-key pages.
    wide_uniform = {"schedule": "uniform", "block_h": 32, "block_n": 128, "split_num_stages": 2,
                    "page_prefetch": False}  # fmt: skip
    gqa_default_then_corrupt([16384] * 3, (64, 8, 128), 16, dev, wide_uniform,
                             {(1, 5): 1 << 30, (2, -1): -5}, {0: 1 << 30, 2: -3}, qlen=4,
                             preset="h100")  # fmt: skip


def merge_states_lanes(dev: str) -> None:
    """splitkv.merge_states over 5 states, one of them empty (lse -inf)."""
    states = torch.randn(5, 7, 12, 512, device=dev, dtype=torch.bfloat16)
    state_lses = torch.randn(5, 7, 12, device=dev)
    state_lses[2] = float("-inf")
    splitkv.merge_states(states, state_lses)


# Each part runs alone with `tests/gpu_memcheck.py PART` (tools/memcheck.sh runs them as
# parallel processes: the sanitizer's cold compiles are most of a run, one process at a time).
PARTS = {
    "mla_pages": mla_pages,
    "gqa_pages": gqa_pages,
    "shared_prefix": shared_prefix,
    "balanced_triton": balanced_triton,
    "gluon": gluon,
    "bulk_copies": bulk_copies,
    "gqa_merge_rows": gqa_merge_rows,
    "wide_uniform_tiles": wide_uniform_tiles,
    "merge_by_length": merge_by_length_cases,
    "default_one_splits": default_one_splits,
    "packed_kv_heads": packed_kv_heads,
    "merge_states": merge_states_lanes,
}


def main(names: list[str]) -> None:
    """The parts `names` (every part where empty), each from seed 0."""
    unknown = sorted(set(names) - set(PARTS))
    if unknown:
        raise SystemExit(f"unknown parts {unknown}; the parts: {' '.join(PARTS)}")
    for name in names or PARTS:
        torch.manual_seed(0)
        PARTS[name]("cuda")
        torch.cuda.synchronize()
        reached(name)
    print("memcheck subset: all calls finished")


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print(" ".join(PARTS))
    else:
        main(sys.argv[1:])

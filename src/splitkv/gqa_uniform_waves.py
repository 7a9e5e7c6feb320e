"""The uniform GQA split count against the waves its launch really takes.

The planner's fill rule (`partition.num_partitions`) counts a wave as 4 programs an SM for
every GQA tile. The uniform tiles (2 stages, no page ids ahead) hold more or fewer than that by
their registers, so the fill rule's launch of 475-950 programs can pass a real wave by a small
tail: its last wave, however few programs it holds, then takes about half a full wave's time,
and the whole launch runs at ~75% of the read ceiling. Half the splits fit one wave of
programs twice as long, which stream at ~94%. Only plans whose lengths are given and equal
(`equal_lengths`) take it.

H200 (docs/perf.md session 51, call 1, 2 rounds; llama3-8b and qwen-64-8 hold 5 programs an
SM, 660 a wave): 768 programs 463.2 -> 364.7 us on half the splits (6 x 65,536; 12 x 32,768,
3 x 131,072 alike), 24 x 32,768 910.2 -> 723.4, 896 programs (14 x 16,384) 242.8 -> 218.2;
launches within a wave lost on half their splits (640 programs: 5 x 65,536 304.4 -> 324.8;
512: 4 x 65,536 242.5 -> 288.8). Where the tile holds 4 (gpt-oss, one kv head): session 50's
gpt-oss 10 x 83,317 (640 programs) 468.7 -> 421.2 us, 6 x 7,768 (768) -4.9%, 16 x 87,309 (1,024,
1.94 waves) +19% on half the splits. gpt-oss's 32-row tile at qlen 4 (head dim 64) holds 5 an
SM too (docs/perf.md session 40, calls 5 and 6, timed on one split against the planner's 2):
48 x 4,000 (768 programs) 153.8 -> 140.8 and 155.6 -> 141.0 us, 48 x 2,048 80.6 -> 74.9 and
81.9 -> 75.5, 56 x 4,000 (896) 161.8 -> 161.1; within a wave (40 x 4,000, 640) one split lost
41%. Its 64-row tile at qlen 8 holds 4 (H100, docs/perf.md session 56, 2 rounds, against
twice the splits): 1.09-1.45 waves 8.5-15.1% faster halved (18 x 32,768 568.1 -> 512.6 us, 42 x
4,000 166.4 -> 141.3), 1.58-1.70 level (-2.3%, -0.4%), within a wave (16 x 32,768) +17.5%.
The taller tiles at head dim 128 hold 2 an SM: their launches take 2-4 waves, where half
the splits lost (qwen-64-8 at qlen 4: 640 and 768 programs +15% to +21%), so they keep the
fill rule's count.
"""

from __future__ import annotations

from collections.abc import Sequence

from splitkv.host_lengths import as_host_lengths
from splitkv.plan_rules import next_pow2

# Programs of the uniform tiles' builds one SM holds (16-bit caches, several splits), by (rows,
# head dim padded to a power of two, kv heads a program, one kv head in the model): compiled
# for sm_90 (`tools/inspect_gqa.py`, tests/test_gqa_compiled.py) and by the CUDA occupancy
# calculator on the H200's own builds (`tools/gqa_plan_ab.py --builds`). Registers bound them:
# at 16 rows 96 a thread at head dim 128 (5 an SM), 109-113 at head dim 64, packed, or on one
# kv head (4); gpt-oss's 32 rows at head dim 64 take 96 (5), its 64 rows 107 (4; H100's
# builds, docs/perf.md session 56).
GQA_UNIFORM_RESIDENCY = {(16, 128, 1, False): 5, (16, 128, 1, True): 4, (16, 64, 1, False): 4,
                         (16, 128, 2, False): 4, (32, 64, 1, False): 5,
                         (64, 64, 1, False): 4}  # fmt: skip
# Past one wave by at most this much, the launch halves its splits; at 1.94 waves (gpt-oss 16 x
# 87,309, 1,024 programs on 528) the halved launch lost 19%, at 1.70 it won 1-4%.
GQA_HALVE_MAX_WAVES = 1.75


def gqa_uniform_residency(block_h: int, head_dim: int, kv_pack: int, num_kv_heads: int,
                          itemsize: int) -> int | None:  # fmt: skip
    """Programs of the uniform tile one SM holds (GQA_UNIFORM_RESIDENCY), or None where it is
    not tabled (the taller tiles at head dim 128, 32-bit types)."""
    if itemsize != 2:
        return None
    key = (block_h, next_pow2(head_dim * kv_pack), kv_pack, num_kv_heads == 1)
    return GQA_UNIFORM_RESIDENCY.get(key)


def gqa_uniform_split_count(num_splits: int, programs_a_split: int, resident: int | None,
                            compute_units: int) -> int:  # fmt: skip
    """The planner's uniform split count, halved where its launch (`num_splits` x
    `programs_a_split`) passes one wave of `resident` programs an SM by at most
    `GQA_HALVE_MAX_WAVES`: the halved launch then fits one wave."""
    if resident is None or num_splits < 2 or compute_units < 1:
        return num_splits
    waves = num_splits * programs_a_split / (resident * compute_units)
    return num_splits // 2 if 1 < waves <= GQA_HALVE_MAX_WAVES else num_splits


def equal_lengths(lengths: Sequence[int]) -> bool:
    """Whether a plan's lengths are given and leave every uniform program the same work: only
    then does its launch run in waves (ragged programs end at their own times). A plan made
    without lengths is a CUDA graph's (docs/serving.md), replayed with lengths it does not
    know: serving steps are ragged, and there the longest request's programs set the time,
    which half the splits would double (one request at the table's width beside short ones),
    against the 10-21% that halving gains when every request is that long. So it keeps the
    fill rule's count."""
    return as_host_lengths(lengths).all_equal

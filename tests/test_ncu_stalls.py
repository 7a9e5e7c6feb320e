"""tools/ncu_stalls.py on a made-up ncu source page (the profile itself needs a GPU): which
rows are the mbarrier waits, and what share of their loop's samples they hold."""

import gzip
from pathlib import Path

import pytest

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed",
          "stall_long_sb", "stall_barrier", "stall_long_sb (Not Issued)"]  # fmt: skip
ROWS = [  # (address, source, samples, executed, long_sb, barrier)
    ("0x1000", "LDC R1, c[0x0][0x28]", "1", "8", "0", "0"),
    ("0x1010", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R7+URZ+0x29110], R3", "2", "100", "0", "2"),
    ("0x1020", "@!P0 BRA 0x2000", "78", "100", "70", "8"),  # the producer's wait
    ("0x1030", "UTMALDG.2D [UR4], [UR22]", "20", "100", "0", "0"),
    ("0x1040", "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [R9+URZ+0x29100], R2", "0", "400", "0", "0"),
    ("0x1050", "@!P1 BRA 0x2010", "40", "400", "40", "0"),  # the consumers' wait
    ("0x1060", "HGMMA.64x16x16.F32.BF16 R24, gdesc[UR4], R24", "160", "400", "0", "0"),
    ("0x2000", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R7+URZ+0x29110], R3", "0", "0", "0", "0"),
]


@pytest.fixture(scope="module")
def stalls(load_tool):
    return load_tool("ncu_stalls")


def write_page(path: Path) -> Path:
    lines = ['"Kernel Name","mla_warp_specialized_loop_kernel",', ",".join(HEADER)]
    lines += [",".join(f'"{v}"' for v in (*row, "0")) for row in ROWS]
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def test_waits_and_their_share_of_the_loop(stalls, tmp_path):
    instructions = stalls.read_sass(write_page(tmp_path / "k_sass.csv.gz"))
    assert [i["offset"] for i in instructions[:2]] == [0, 0x10]
    assert instructions[2]["stalls"] == {"long_sb": 70, "barrier": 8}
    waits = stalls.barrier_waits(instructions)
    # Only executed waits count (the retry block at 0x2000 ran 0 times here); a wait's samples
    # are its own and its branch's, its share that of every instruction run as often.
    assert [(w["barrier"], w["executed"], w["samples"], w["share"]) for w in waits] == [
        ("R7+URZ+0x29110", 100, 80, 0.8),
        ("R9+URZ+0x29100", 400, 40, 0.2),
    ]
    assert stalls.loop_stalls(instructions, 400) == {"long_sb": 40, "barrier": 0}

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


def write_page(path: Path, rows=ROWS) -> Path:
    lines = ['"Kernel Name","mla_warp_specialized_loop_kernel",', ",".join(HEADER)]
    lines += [",".join(f'"{v}"' for v in (*row, "0")) for row in rows]
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


CONSUMER_LOOP = [  # one block of a consumer: wait, descriptors, S, softmax, P V, release
    ("0x1000", "IADD3 R1, R1, 0x1, RZ", "1", "400", "0", "0"),
    ("0x1010", "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [R9+URZ+0x29100], R2", "0", "400", "0", "0"),
    ("0x1020", "@!P1 BRA 0x3000", "30", "400", "30", "0"),
    ("0x1030", "R2UR UR4, R0", "4", "400", "0", "0"),
    ("0x1040", "HGMMA.64x32x16.F32.BF16 R24, gdesc[UR4], R24", "10", "400", "0", "0"),
    ("0x1050", "UIADD3.64 UR6, UR4, 0x2, URZ", "2", "400", "0", "0"),
    ("0x1060", "HGMMA.64x32x16.F32.BF16 R24, gdesc[UR6], R24", "10", "400", "0", "0"),
    ("0x1070", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "20", "400", "0", "20"),
    ("0x1080", "FMNMX R2, R24, R25, !PT", "8", "400", "0", "0"),
    ("0x1090", "MUFU.EX2 R3, R2", "6", "400", "0", "0"),
    ("0x10a0", "HGMMA.64x32x16.F32.BF16 R88, gdesc[UR8].tnspA, R88", "5", "400", "0", "0"),
    ("0x10b0", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "4", "400", "0", "4"),
    ("0x10c0", "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R9+URZ+0x29120], RZ", "0", "400", "0", "0"),
    ("0x10d0", "BRA 0x1000", "0", "400", "0", "0"),
]


def test_a_consumer_loop_cut_into_phases(stalls, tmp_path):
    instructions = stalls.read_sass(write_page(tmp_path / "c_sass.csv.gz", CONSUMER_LOOP))
    phases = stalls.phases(instructions, 400)
    # The descriptors between the wait and the first wgmma, then each wgmma chain through the
    # DEPBAR that waits for it (descriptors built inside the chain count in it), the softmax
    # between the chains, and the release after the last.
    assert [(p["phase"], p["instructions"], p["samples"]) for p in phases] == [
        ("before wait", 1, 1),
        ("wait", 2, 30),
        ("to wgmma 1", 1, 4),
        ("wgmma 1", 4, 42),
        ("after wgmma 1", 2, 14),
        ("wgmma 2", 2, 9),
        ("after wgmma 2", 2, 0),
    ]
    assert phases[1]["share"] == 0.3 and phases[1]["stalls"]["long_sb"] == 30


def test_a_wait_between_the_chains_resumes_the_phase_it_interrupted(stalls, tmp_path):
    # The 64-row consumers wait for the other warpgroup's P between their wgmma chains.
    rows = [*CONSUMER_LOOP[:9],
            ("0x1084", "SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [R9+URZ+0x29130], R4", "0", "400",
             "0", "0"),
            ("0x1088", "@!P2 BRA 0x3010", "7", "400", "7", "0"),
            *CONSUMER_LOOP[9:]]  # fmt: skip
    instructions = stalls.read_sass(write_page(tmp_path / "w_sass.csv.gz", rows))
    phases = {
        p["phase"]: (p["instructions"], p["samples"]) for p in stalls.phases(instructions, 400)
    }
    assert phases["wait"] == (4, 37) and phases["after wgmma 1"] == (2, 14)
    assert phases["to wgmma 1"] == (1, 4) and phases["wgmma 2"] == (2, 9)

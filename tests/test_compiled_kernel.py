"""What the compiler makes of the MLA stage-1 kernel for the H200 (sm_90), checked without a GPU
through tools/inspect_kernel.py (in its own process: it compiles for real, not through the
interpreter): the page-id prefetch must keep letting the pipeliner hold two KV blocks in
flight, and the default configuration must not spill."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from splitkv.kernels.gathered_keys import GATHER_WARPS

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def compiled(*args: str, tool: str = "inspect_kernel.py") -> dict:
    """The tool's last JSON line (`compiled_all` for every line)."""
    return compiled_all(*args, tool=tool)[-1]


def compiled_all(*args: str, tool: str = "inspect_kernel.py") -> list[dict]:
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    done = subprocess.run(
        [sys.executable, str(TOOLS / tool), "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if done.returncode != 0:
        # A kernel the frontend rejects is a failure; a machine without the CUDA backend's
        # tools (ptxas) only skips.
        if "CompilationError" in done.stderr:
            pytest.fail(f"the kernel does not compile: {done.stderr.strip()[-600:]}")
        pytest.skip(f"cannot compile for sm_90 here: {done.stderr.strip()[-300:]}")
    return [json.loads(line) for line in done.stdout.strip().splitlines()]


@pytest.mark.triton_3_6  # Triton 3.4's build spills 32 bytes
def test_default_tile_compiles_without_spills():
    report = compiled("--block-h", "16", "--block-n", "64", "--warps", "4", "--stages", "2")
    assert report["stack_bytes"] == 0 and report["mma_sync"] > 0
    assert report["shared_kb"] <= 113  # two programs per SM (the fill rule's assumption)


@pytest.mark.triton_3_6
def test_page_prefetch_double_buffers_the_kv_blocks():
    knobs = ("--block-h", "16", "--block-n", "32", "--warps", "4", "--stages", "3")
    assert compiled(*knobs)["kv_blocks_in_flight"] == 1
    assert compiled(*knobs, "--prefetch")["kv_blocks_in_flight"] == 2


@pytest.mark.triton_3_6
def test_the_64_row_loop_keeps_odd_pages_out_of_local_memory():
    # Page 100 cuts key blocks at any key: dividing each key twice spilled 165 local loads
    # and stores a pass of this loop (H100: 32% slower than page 4); one division a block
    # keeps it clear (kernels/paged.py BY_BLOCK, docs/perf.md session 62).
    tile = ("--block-h", "64", "--block-n", "64", "--warps", "8", "--heads", "48")
    report = compiled(*tile, "--page-size", "100", "--balanced-batch", "8", "--program-loop")
    assert report["wgmma"] > 0 and report["loop_instructions"] > 0
    assert report["loop_spills"] == 0


def test_wgmma_rate_compiles_each_variant_as_one_chain():
    # tools/wgmma_rate.py (docs/perf.md session 21): every variant 4 x 16 wgmma a warpgroup
    # behind one wait, so what it times is the instruction's rate, not serialized waits.
    reports = compiled_all(tool="wgmma_rate.py")
    assert len(reports) == 7
    assert all(r["wgmma"] == 64 and r["waits"] == 1 for r in reports)


def test_gluon_probe_compiles_warp_specialized():
    # The warp-specialized Gluon probe (tools/gluon_mla_probe.py, docs/perf.md): a one-warp
    # bulk-copy producer beside two wgmma warpgroups, within shared memory and without spills,
    # with and without the softmax overlapping the previous block's P V.
    for knobs in (("--block-n", "64", "--stages", "2"), ("--block-n", "32", "--stages", "3")):
        reports = compiled_all(*knobs, tool="gluon_mla_probe.py")
        assert [r["overlap"] for r in reports] == [False, True]
        for report in reports:
            assert report["stack_bytes"] == 0 and report["setmaxnreg"] > 0
            assert report["wgmma"] > 0 and report["bulk_copies"] > 0
            assert report["shared_kb"] <= 227  # the H200's shared memory per block


@pytest.mark.parametrize("page_size,heads,qlen", [(64, 128, 1), (8, 16, 8), (256, 12, 8)])
def test_warp_specialized_kernel_compiles(page_size, heads, qlen):
    # The library's Gluon stage 1 (kernels/mla_warp_specialized.py): a producer warp of bulk
    # copies (one per page a block spans) beside two wgmma warpgroups, no spills, one program
    # per SM's shared memory.
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", str(heads),
                      "--qlen", str(qlen))  # fmt: skip
    assert report["stack_bytes"] == 0 and report["setmaxnreg"] > 0 and report["wgmma"] > 0
    copies_per_block = 3 * (64 // min(page_size, 64))  # two latent halves and the rope part
    assert report["bulk_copies"] >= copies_per_block + 3  # and three for the queries
    assert report["shared_kb"] <= 227


@pytest.mark.parametrize(
    "page_size,block_q,qlen,loop", [(1, 16, 1, ()), (100, 64, 4, ("--balanced-batch", "8"))]
)
def test_gathered_key_rows_compile_without_spills(page_size, block_q, qlen, loop):
    # Pages bulk copies cannot take (kernels/gathered_keys.py): the producer's 16-byte copies,
    # 144 a 64-key block (64 rows x 72 pieces / 32 threads) over its warps, and nothing spilled
    # in either partition (uniform 16 rows; the 64-row program loop). (The uniform 64-row
    # build keeps 8 bytes of stack: docs/perf.md session 64.)
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", "12",
                      "--qlen", str(qlen), "--block-q", str(block_q), *loop)  # fmt: skip
    assert report["gathered_copies"] * GATHER_WARPS.value == 144 and report["stack_bytes"] == 0
    assert report["setmaxnreg"] > 0 and report["wgmma"] > 0 and report["shared_kb"] <= 227


@pytest.mark.parametrize("lead", [1, 2])
def test_page_ids_ahead_compile_in_the_program_loop(lead):
    # The gathering producer's page ids 1 or 2 blocks ahead (GATHER_IDS_LEAD, 1 by default
    # on pages under 8 keys): issue 5's 12 heads x qlen 4 at page 1 in the balanced program
    # loop still compiles, its copies as at lead 0, at most 8 bytes of stack (lead 0 and 2:
    # none; lead 1: 8, docs/perf.md session 68).
    report = compiled("--warp-specialized", "--page-size", "1", "--heads", "12", "--qlen", "4",
                      "--block-q", "64", "--balanced-batch", "8",
                      "--gather-ids-lead", str(lead))  # fmt: skip
    assert report["gathered_copies"] * GATHER_WARPS.value == 144 and report["stack_bytes"] <= 8
    assert report["setmaxnreg"] > 0 and report["wgmma"] > 0


@pytest.mark.parametrize("page_size,lead_applies", [(1, True), (100, False)])
def test_page_ids_lead_only_on_small_pages(page_size, lead_applies):
    # The lead holds on pages under GATHER_IDS_LEAD_PAGES_UNDER keys (page 1: -6% at 128 heads
    # on an H100, session 71; pages 2-4 -5 to -7%, session 72), not on larger gathered pages
    # (pages 12 and 100 timed level with it, docs/perf.md session 72, and lead 0's producer is
    # shorter): the default compiles as lead 1 at page 1, as lead 0 at page 100 (128 heads'
    # alternating consumers: 4,296 against 4,288 instructions at page 1; at page 100 4,312
    # both, 4,320 with the lead on every page).
    args = ("--warp-specialized", "--alternate-blocks", "--page-size", str(page_size),
            "--heads", "128", "--qlen", "1")  # fmt: skip
    default = compiled(*args)["sass_instructions"]
    lead_0 = compiled(*args, "--gather-ids-lead", "0")["sass_instructions"]
    assert (default != lead_0) == lead_applies


@pytest.mark.parametrize("page_size,heads,qlen,batch", [(64, 128, 1, 8), (8, 12, 4, 48),
                                                        (64, 12, 4, 8)])  # fmt: skip
def test_warp_specialized_program_loop_compiles(page_size, heads, qlen, batch):
    # The balanced schedule's program loop on the Gluon tile (kernels/mla_warp_specialized_loop.py),
    # queries by bulk copies too: within one program per SM's shared memory, both partitions
    # register-capped (setmaxnreg).
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", str(heads),
                      "--qlen", str(qlen), "--balanced-batch", str(batch))  # fmt: skip
    assert report["setmaxnreg"] > 0 and report["wgmma"] > 0 and report["bulk_copies"] > 0
    assert report["shared_kb"] <= 227
    # A few loop scalars spilled, reloaded once a piece; small batches once spilled ~280 bytes
    # reloaded every block (warp_specialized.MIN_BLOCK_B).
    assert report["stack_bytes"] <= 32


@pytest.mark.parametrize(
    "page_size,heads,qlen,block_q,batch",
    [
        (64, 12, 1, 16, 0),
        (16, 16, 2, 32, 0),
        (64, 12, 1, 16, 8),
        (8, 12, 2, 32, 48),
        (64, 12, 4, 64, 0),
        (16, 16, 4, 64, 8),
    ],
)
def test_keys_as_rows_kernels_compile(page_size, heads, qlen, block_q, batch):
    # 16- and 32-row head blocks with the keys as wgmma's rows (kernels/mla_keys_as_rows.py):
    # one consumer warpgroup, 68 wgmma a block (36 for the scores, 32 for O^T), one program
    # per SM, no spills in the uniform kernel and a few loop scalars in the program loop; 64
    # rows (opt-in) on two warpgroups of 32 within the 227 KB an SM has.
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", str(heads),
                      "--qlen", str(qlen), "--block-q", str(block_q), "--balanced-batch",
                      str(batch), "--keys-as-rows")  # fmt: skip
    assert report["wgmma"] == 68 and report["mma_sync"] == 0 and report["setmaxnreg"] > 0
    assert report["stack_bytes"] <= (32 if batch else 0) and report["loop_spills"] == 0
    assert report["shared_kb"] <= {16: 165, 32: 185, 64: 227}[block_q]


@pytest.mark.parametrize("block_q,qlen,batch", [(32, 2, 0), (32, 2, 48), (16, 1, 8)])
def test_two_consumer_groups_compile(block_q, qlen, batch):
    # consumer_groups=2 on a narrow block: two warpgroups of 8-16 query rows, the same 68
    # wgmma each and the same ring and shared memory as one group, no spills.
    report = compiled("--warp-specialized", "--heads", "12", "--qlen", str(qlen), "--block-q",
                      str(block_q), "--balanced-batch", str(batch),
                      "--consumer-groups", "2")  # fmt: skip
    assert report["wgmma"] == 68 and report["setmaxnreg"] > 0
    assert report["stack_bytes"] <= (32 if batch else 0) and report["loop_spills"] == 0
    assert report["shared_kb"] <= {16: 165, 32: 185}[block_q]


@pytest.mark.parametrize("page_size,heads,qlen", [(64, 128, 1), (8, 16, 8)])
def test_alternating_consumers_compile_without_serialized_wgmma(page_size, heads, qlen):
    # alternate_blocks: two one-warpgroup consumer partitions on a 4-stage ring of 32-key
    # blocks. ptxas serializes every wgmma (a wait after each) when it runs short of registers
    # for the accumulators in flight, as it did with the owner's P V in flight across the
    # loop's back edge: 1.2x slower on the H200 (docs/perf.md v0.2.19).
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", str(heads),
                      "--qlen", str(qlen), "--alternate-blocks")  # fmt: skip
    assert report["wgmma"] == 84 and report["wgmma_waits"] <= 16
    assert report["loop_spills"] == 0 and report["kv_blocks_in_flight"] == 4
    assert report["shared_kb"] <= 227


@pytest.mark.parametrize("balanced_batch", ["0", "8"])
def test_warp_specialized_kernels_compile_with_bf16_partials(balanced_batch):
    # partial_dtype=torch.bfloat16: the Gluon stores cast the fp32 partials to the workspace's
    # bfloat16, without spills.
    report = compiled("--warp-specialized", "--heads", "128", "--bf16-partials",
                      "--balanced-batch", balanced_batch)  # fmt: skip
    assert report["wgmma"] > 0 and report["stack_bytes"] <= 32


@pytest.mark.parametrize("balanced_batch", ["0", "8"])
@pytest.mark.parametrize("heads,block_q", [(12, 16), (128, 64)])
def test_early_start_brings_keys_before_its_wait(balanced_batch, heads, block_q):
    # early_start: the producer's first key blocks are issued before griddepcontrol.wait (the
    # queries after it), and the consumers' loop is the one the default builds.
    args = ("--warp-specialized", "--heads", str(heads), "--block-q", str(block_q),
            "--balanced-batch", balanced_batch)  # fmt: skip
    early, default = compiled(*args, "--early-start"), compiled(*args)
    assert default["copies_before_wait"] is None
    assert early["copies_before_wait"] > 0
    assert early["wgmma"] == default["wgmma"] and early["shared_kb"] == default["shared_kb"]
    assert early["stack_bytes"] <= 32


@pytest.mark.parametrize("heads,qlen,block_q,page_size", [(12, 1, 16, 64), (16, 2, 32, 8)])
@pytest.mark.parametrize("lse", [[], ["--no-lse"]])
def test_program_loop_compiles_with_whole_pieces(heads, qlen, block_q, page_size, lse):
    # whole_pieces: the keys-as-rows consumers' epilogue stores a one-piece request's rows to
    # out / lse or its partial; the block loop is the same (68 wgmma). The 32-row build's
    # stack grows 32 -> 64 B, none of it between the first and last wgmma (SASS, session 12).
    # Without lse (return_lse=False) too: that build once failed in Triton's lowering.
    report = compiled("--warp-specialized", "--page-size", str(page_size), "--heads", str(heads),
                      "--qlen", str(qlen), "--block-q", str(block_q), "--balanced-batch", "8",
                      "--keys-as-rows", "--whole-pieces", *lse)  # fmt: skip
    assert report["wgmma"] == 68 and report["setmaxnreg"] > 0
    assert report["stack_bytes"] <= 64 and report["shared_kb"] <= {16: 165, 32: 185}[block_q]


@pytest.mark.triton_3_6  # Triton 3.8's build: 555 instructions
def test_merge_fold_issues_a_whole_tile_of_loads_on_one_warp():
    # The balanced merge's fold (tools/inspect_merge.py): a [64, 64] tile of partials an
    # iteration on one warp, its 2 lse and 32 16-byte loads a thread issued together, at most
    # 168 registers (12 programs an SM). The loop's instructions are the long rows' serial
    # chain: 779 with a select in fold_states, 495 without (docs/perf.md, v0.2.14).
    report = compiled(tool="inspect_merge.py")
    assert report["registers"] <= 168 and report["stack_bytes"] == 0
    assert report["loop_loads"] == 34 and report["loop_instructions"] < 550


@pytest.mark.triton_3_6
def test_merge_by_length_keeps_the_long_rows_tile():
    # merge_long_partials (kernels/merge_by_length.py): the long requests' rows fold the
    # default's [64, 64] tile a step on one warp (34 loads, no more registers than the
    # default's 168), the short ones 4 rows in one tile of 16.
    report = compiled("--qlen", "4", "--rows", "4", "--long-partials", "16",
                      tool="inspect_merge.py")  # fmt: skip
    assert report["registers"] <= 168 and report["stack_bytes"] == 0
    assert report["loop_loads"] == 34


@pytest.mark.parametrize("heads,qlen,block_q,d_split", [(12, 1, 16, 16), (12, 2, 32, 8),
                                                        (128, 1, 64, 8)])  # fmt: skip
def test_merge_streams_stage_one_raises_its_flags(heads, qlen, block_q, d_split):
    # merge_streams (kernels/split_flags.py): after its partial stores the uniform Gluon
    # kernel raises each merge program's flag with release semantics, without spills.
    report = compiled("--warp-specialized", "--heads", str(heads), "--qlen", str(qlen),
                      "--block-q", str(block_q), "--merge-streams", str(d_split))  # fmt: skip
    assert report["release_atomics"] > 0 and report["stack_bytes"] == 0
    assert report["loop_spills"] == 0


def test_merge_streams_merge_polls_its_flags():
    # The streaming merge's fold loop: its flags read with acquire semantics, then the
    # flagged partials, on the 8k x 1 tile without spills.
    report = compiled("--uniform", "--block-s", "128", "--block-d", "32", "--warps", "2",
                      "--merge-streams", tool="inspect_merge.py")  # fmt: skip
    assert report["stack_bytes"] == 0 and report["loop_loads"] >= 18


@pytest.mark.parametrize("knobs", [("--uniform", "--block-s", "128", "--block-d", "32",
                                    "--warps", "2"), ("--block-s", "64", "--block-d", "32",
                                                      "--warps", "2")])  # fmt: skip
def test_merge_issues_the_outputs_with_the_lses(knobs):
    # On two warps the lse maximum's reduction crosses warps (barriers). The tile's output
    # loads come before it, so both round trips to L2 overlap (docs/perf.md, v0.2.16: before,
    # 2 of the 8k x 1 tile's 18 loads preceded the first barrier).
    report = compiled(*knobs, tool="inspect_merge.py")
    assert report["loop_barriers"] > 1
    assert report["loads_before_barrier"] == report["loop_loads"]


def test_spill_audit_lists_the_planned_triton_tiles(monkeypatch):
    # tools/spill_audit.py without compiling: the H100's balanced 32-row tile at page 100 (qlen
    # 2) takes two chains without page ids ahead, and each tile names the batches taking it.
    # The tool turns the interpreter off on import: monkeypatch restores it afterwards.
    monkeypatch.setenv("TRITON_INTERPRET", os.environ.get("TRITON_INTERPRET", "1"))
    monkeypatch.syspath_prepend(str(TOOLS))
    import spill_audit

    tiles = spill_audit.planned_tiles("h100", [12], [2], [100])
    balanced = [tile for tile in tiles if tile.balanced_batch]
    assert balanced and all(t.block_h == 32 and t.latent_chains == 2 for t in balanced)
    assert not any(t.prefetch for t in balanced)
    assert sorted(name for names in tiles.values() for name in names) == [
        "12x q2 p100 1x327600+47", "12x q2 p100 ragged", "12x q2 p100 uniform"
    ]  # fmt: skip

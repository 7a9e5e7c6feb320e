"""The H100's own rule for the 32-row head-dim-128 GQA tile: uniform splits at the long-split
tile's count keep the uniform tile where two requests or more split into 2,048 keys or more
(`gqa_plan_tile.keeps_uniform_tile`, docs/perf.md session 57); the H200 keeps the long-split
tile everywhere it fits."""

import dataclasses

import splitkv
from splitkv.gqa_plan_tile import keeps_uniform_tile

H100 = splitkv.DeviceSpec.preset("h100")
H200 = splitkv.DeviceSpec.preset("h200")
MODELS = {"qwen-64-8": (64, 8, 128), "llama3-70b-tp8": (8, 1, 128), "gpt-oss": (64, 8, 64)}


def tile_of(spec, model, qlen, requests, keys, lengths=True):
    heads, kv_heads, head_dim = MODELS[model]
    plan = splitkv.plan_decode(
        requests, keys + 16, heads, qlen=qlen, page_size=16, device="meta", device_spec=spec,
        kind="gqa", num_kv_heads=kv_heads, head_dim=head_dim,
        seq_lens=[keys] * requests if lengths else None,
    )  # fmt: skip
    fields = ("schedule", "num_splits", "block_h", "block_n", "split_num_stages", "page_prefetch")
    return tuple(getattr(plan, f) for f in fields)


def test_the_h100_keeps_the_uniform_tile_on_long_splits_of_several_requests():
    # qwen-64-8 at qlen 4: 32 rows, 8 splits of 2,048 keys (run172: 80.4 -> 79.1 us).
    assert tile_of(H100, "qwen-64-8", 4, 3, 16384) == ("uniform", 8, 32, 128, 2, False)
    assert tile_of(H200, "qwen-64-8", 4, 3, 16384) == ("uniform", 8, 32, 64, 3, True)
    # llama3-70b-tp8 at qlen 4, 32 x 32,768 on 8 splits of 4,096 keys (196.5 -> 187.2 us).
    assert tile_of(H100, "llama3-70b-tp8", 4, 32, 32768)[3:] == (128, 2, False)


def test_one_request_short_splits_and_other_tiles_keep_the_long_split_tile():
    # One request: level on the H100, so the tile measured on the H200 stays.
    assert tile_of(H100, "qwen-64-8", 4, 1, 65536) == tile_of(H200, "qwen-64-8", 4, 1, 65536)
    # 64 splits of 1,024 keys: the long-split tile 2.1-2.7% ahead on the H100.
    assert tile_of(H100, "llama3-70b-tp8", 4, 4, 65536)[3:] == (64, 3, True)
    # One split (24 x 4,096, halved down to it for a wave of the long-split tile): untimed.
    assert tile_of(H100, "qwen-64-8", 4, 24, 4096) == tile_of(H200, "qwen-64-8", 4, 24, 4096)
    # Head dim 64 (gpt-oss's 128-key long-split blocks): the uniform tile's 64-key blocks at
    # that count lost 15-33% (run174).
    assert tile_of(H100, "gpt-oss", 4, 4, 32768) == tile_of(H200, "gpt-oss", 4, 4, 32768)


def test_plans_without_lengths_are_the_h200s():
    for requests, keys in ((3, 16384), (32, 32768), (16, 4096)):
        assert tile_of(H100, "qwen-64-8", 4, requests, keys, lengths=False) == tile_of(
            H200, "qwen-64-8", 4, requests, keys, lengths=False
        )


def test_the_rule_asks_for_the_wide_tile_two_requests_and_the_least_keys():
    # (rows, head dim, requests, keys, splits, spec)
    assert keeps_uniform_tile(32, 128, 2, 16384, 8, H100)  # 2,048 keys a split
    assert keeps_uniform_tile(32, 96, 2, 16384, 4, H100)  # head dim padded to 128
    assert not keeps_uniform_tile(32, 128, 2, 16000, 8, H100)  # 2,000 keys a split
    assert not keeps_uniform_tile(32, 128, 1, 65536, 8, H100)  # one request
    assert not keeps_uniform_tile(32, 128, 24, 4096, 1, H100)  # one split: its own build
    assert not keeps_uniform_tile(16, 128, 4, 16384, 4, H100)
    assert not keeps_uniform_tile(64, 128, 4, 16384, 4, H100)
    assert not keeps_uniform_tile(32, 64, 4, 16384, 4, H100)
    assert not keeps_uniform_tile(32, 128, 4, 16384, 4, H200)  # 0: never
    assert H200.tunables.gqa_wide_uniform_split_keys == 0
    # The two presets' tables differ in this field and the MLA Gluon tile's piece cost and
    # copy height alone (the H200's is `splitkv tune`'s fit).
    h100_otherwise = dataclasses.replace(
        H100.tunables,
        gqa_wide_uniform_split_keys=0,
        wide_loop_piece_cost=0,
        wide_copy_rows=0,
        fitted=True,
    )
    assert h100_otherwise == H200.tunables


def test_an_h100_read_off_torch_takes_the_h100_preset():
    assert splitkv.device.match_preset("NVIDIA H100 80GB HBM3", "") is splitkv.DeviceSpec.preset(
        "h100"
    )

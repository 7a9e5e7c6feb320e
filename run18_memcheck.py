# Session 18: only gpu_memcheck's merge_streams case (uncommitted helper).
import torch
import splitkv
from splitkv.testing import check_against_reference, random_mla_case
torch.manual_seed(0)
dev = "cuda"
lengths = [1, 63, 64, 65, 4096, 0, 2]
case = random_mla_case(lengths, 12, page_size=64, dtype=torch.bfloat16, device=dev)
lens = case.seq_lens.clone()
lens[0] = 1 << 30
lens[1] = -4
for gluon in (None, False):
    streams = splitkv.plan_decode(len(lengths), 4160, 12, device=dev, num_splits=16,
                                  merge_streams=True, warp_specialized=gluon)
    out, lse = splitkv.mla_decode(*case.args, plan=streams, validate=True)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    splitkv.mla_decode(case.q, case.kv_cache, case.page_table, lens, plan=streams)
    torch.cuda.synchronize()
    assert not streams.workspace.split_flags.any()
    print("ok", gluon)

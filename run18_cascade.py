# Session 18: why the cascade is wrong on the mix and slow on 8 x 327,600 (uncommitted diagnostic).
import dataclasses, sys, torch
import splitkv
from splitkv import prefix as P
from splitkv.bench import shapes, sweep
from splitkv.mla import _launch
from splitkv.checks import check_mla_call
from splitkv.plan import MAX_HEADS, MAX_QLEN, MLA_HEAD_DIM_QK, MLA_HEAD_DIM_V
from splitkv.testing import relative_error

def timed(fn, reps=10):
    fn(); torch.cuda.synchronize()
    a, b = torch.cuda.Event(True), torch.cuda.Event(True)
    a.record()
    for _ in range(reps): fn()
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / reps * 1000

def fields(plan):
    keys = ("schedule", "num_splits", "num_programs", "block_h", "program_loop", "warp_specialized",
            "keys_as_rows", "whole_pieces", "early_start", "merge_streams")
    return {k: getattr(plan, k, None) for k in keys}

for shape in (shapes.shared_prefix_shape(), shapes.prefix_mix_shape()):
    case = sweep._build_cases(shape, 0, 1)[0]
    ref_out, ref_lse = splitkv.reference.mla_decode(*case.args)
    groups = [(list(m), t // 64) for m, t in case.sharing]
    plan = splitkv.plan_shared_prefix(groups, case.q.shape[0], case.page_table.shape[1], 64, "cuda")
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, plan)
    print(shape.label, "cascade err", relative_error(out, ref_out), "lse err", relative_error(lse, ref_lse),
          "us", timed(lambda: splitkv.mla_decode_shared_prefix(*case.args, plan)))
    q, kv, table, lens = case.args
    call = check_mla_call(q, kv, table, lens, scale=None, out=None, lse=None, head_dim_qk=MLA_HEAD_DIM_QK,
                          head_dim_v=MLA_HEAD_DIM_V, max_heads=MAX_HEADS, max_qlen=MAX_QLEN)
    # prefix pass alone, its default plan and each group's rows against the reference
    po, pl = P._prefix_pass(q, call, table, plan, 1, 12)
    print("  prefix pass us", timed(lambda: P._prefix_pass(q, call, table, plan, 1, 12)))
    for g, (members, pages) in enumerate(plan.groups):
        m = list(members)
        stacked = q[m].reshape(1, 1, len(m) * 12, 576)
        t1 = table[m[0]:m[0] + 1]
        l1 = torch.tensor([pages * 64], dtype=torch.int32, device="cuda")
        ro, rl = splitkv.reference.mla_decode(stacked, kv, t1, l1)
        e = relative_error(po[m].reshape(1, 1, -1, 512), ro)
        pp = splitkv.plan_decode(1, t1.shape[1] * 64, len(m) * 12, dtype=q.dtype, device="cuda")
        o2, _ = splitkv.mla_decode(stacked, kv, t1, l1, plan=dataclasses.replace(pp) if False else pp)
        tri = splitkv.plan_decode(1, t1.shape[1] * 64, len(m) * 12, dtype=q.dtype, device="cuda", warp_specialized=False)
        o3, _ = splitkv.mla_decode(stacked, kv, t1, l1, plan=tri)
        print("  group", g, "prefix err", e, "alone err", relative_error(o2, ro), "triton err", relative_error(o3, ro),
              "plan", fields(pp))
        if g == 0:
            print("   alone us", timed(lambda: splitkv.mla_decode(stacked, kv, t1, l1, plan=pp)),
                  "triton us", timed(lambda: splitkv.mla_decode(stacked, kv, t1, l1, plan=tri)))
    # suffix pass alone against the reference on shifted tables
    key_starts = plan.prefix_len.clone()
    shift = key_starts // 64
    cols = torch.arange(table.shape[1], device="cuda")[None, :] + shift[:, None].long()
    shifted = torch.gather(table, 1, cols.clamp(max=table.shape[1] - 1))
    ro, rl = splitkv.reference.mla_decode(q, kv, shifted, lens - key_starts)
    for ws in (None, False):
        sp = splitkv.plan_decode(q.shape[0], table.shape[1] * 64, 12, dtype=q.dtype, device="cuda", warp_specialized=ws)
        so = torch.empty_like(out); sl = torch.empty_like(lse)
        _launch(sp, q, call, table, lens, so, sl, key_starts)
        us = timed(lambda: _launch(sp, q, call, table, lens, so, sl, key_starts))
        print("  suffix ws", ws, "err", relative_error(so, ro), "lse err", relative_error(sl, rl), "us", us, fields(sp))
    sys.stdout.flush()

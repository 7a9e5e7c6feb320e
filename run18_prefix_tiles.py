# Session 18: the cascade's prefix pass (96 stacked rows) on each tile and split count (uncommitted).
import json, os, torch
import splitkv
from splitkv.bench import shapes, sweep
from splitkv.timing import cuda_graph_times_us
from splitkv.testing import relative_error

rows_out = []
for shape in (shapes.shared_prefix_shape(), shapes.prefix_mix_shape()):
    case = sweep._build_cases(shape, 0, 1)[0]
    q, kv, table, lens = case.args
    stacked, tables, plens = [], [], []
    for members, tokens in case.sharing:
        m = list(members)
        stacked.append(q[m].reshape(1, 1, len(m) * 12, 576))
        tables.append(table[m[0]])
        plens.append(tokens)
    sq = torch.cat(stacked)
    st = torch.stack(tables)
    sl = torch.tensor(plens, dtype=torch.int32, device="cuda")
    ro, _ = splitkv.reference.mla_decode(sq, kv, st, sl)
    flops = 2 * sq.shape[2] * sum(plens) * (576 + 512)
    variants = {"default": {}, "rows32": {"block_h": 32}, "wide_kar": {"keys_as_rows": True},
                "triton": {"warp_specialized": False}, "balanced": {"schedule": "balanced"},
                "rows32_balanced": {"block_h": 32, "schedule": "balanced"}}
    for s in (32, 66, 132, 264):
        variants[f"splits{s}"] = {"num_splits": s}
        variants[f"rows32_splits{s}"] = {"num_splits": s, "block_h": 32}
    for name, knobs in variants.items():
        try:
            plan = splitkv.plan_decode(sq.shape[0], st.shape[1] * 64, sq.shape[2], dtype=sq.dtype,
                                       device="cuda", **knobs)
            o, _ = splitkv.mla_decode(sq, kv, st, sl, plan=plan)
            err = relative_error(o, ro)
            p20, p50, p80 = cuda_graph_times_us(lambda: splitkv.mla_decode(sq, kv, st, sl, plan=plan), 30)
            row = {"shape": shape.label, "variant": name, "p50_us": p50, "err": err,
                   "tflops": flops / p50 / 1e6, "schedule": plan.schedule, "splits": plan.num_splits,
                   "block_h": plan.block_h, "ws": plan.warp_specialized, "kar": plan.keys_as_rows}
        except Exception as e:
            row = {"shape": shape.label, "variant": name, "error": str(e)[:200]}
        print(json.dumps(row), flush=True)
        rows_out.append(row)
with open(os.path.join(os.environ.get("STEP_OUT", "."), "prefix_tiles.json"), "w") as f:
    json.dump(rows_out, f, indent=1)

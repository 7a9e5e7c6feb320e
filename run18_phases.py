# Session 18: the cascade's phases under CUDA graphs (uncommitted diagnostic).
import json, os, torch
import splitkv
from splitkv import prefix as P
from splitkv.bench import shapes, sweep
from splitkv.checks import check_mla_call
from splitkv.merge import merge_states
from splitkv.plan import MAX_HEADS, MAX_QLEN, MLA_HEAD_DIM_QK, MLA_HEAD_DIM_V
from splitkv.timing import cuda_graph_times_us
from splitkv.testing import relative_error

rows = []
for shape in (shapes.shared_prefix_shape(), shapes.prefix_mix_shape()):
    case = sweep._build_cases(shape, 0, 1)[0]
    q, kv, table, lens = case.args
    groups = [(list(m), t // 64) for m, t in case.sharing]
    plan = splitkv.plan_shared_prefix(groups, q.shape[0], table.shape[1], 64, "cuda")
    ref, _ = splitkv.reference.mla_decode(*case.args)
    out, lse = splitkv.mla_decode_shared_prefix(*case.args, plan)
    call = check_mla_call(q, kv, table, lens, scale=None, out=None, lse=None, head_dim_qk=MLA_HEAD_DIM_QK,
                          head_dim_v=MLA_HEAD_DIM_V, max_heads=MAX_HEADS, max_qlen=MAX_QLEN)
    key_starts = torch.where(plan.prefix_len <= lens, plan.prefix_len, 0).int()
    st, sl = P._after_prefix(table, lens, key_starts, 64)
    po, pl = P._prefix_pass(q, call, table, plan, 1, 12)
    so, sll = splitkv.mla_decode(q, kv, st, sl)
    phases = {
        "cascade": lambda: splitkv.mla_decode_shared_prefix(*case.args, plan),
        "prefix_pass": lambda: P._prefix_pass(q, call, table, plan, 1, 12),
        "suffix_decode": lambda: splitkv.mla_decode(q, kv, st, sl),
        "after_prefix": lambda: P._after_prefix(table, lens, key_starts, 64),
        "merge_states": lambda: merge_states(torch.stack([po, so]), torch.stack([pl, sll])),
    }
    row = {"shape": shape.label, "err": relative_error(out, ref)}
    for name, fn in phases.items():
        row[name] = cuda_graph_times_us(fn, 30)[1]
    print(json.dumps(row), flush=True)
    rows.append(row)
with open(os.path.join(os.environ.get("STEP_OUT", "."), "cascade_phases.json"), "w") as f:
    json.dump(rows, f, indent=1)

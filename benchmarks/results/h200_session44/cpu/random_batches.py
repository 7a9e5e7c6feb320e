import random, subprocess, json, sys
random.seed(44)
models = ["gpt-oss", "llama3-8b", "qwen-64-8", "llama3-70b-tp8"]
kvh = {"gpt-oss": 8, "llama3-8b": 8, "qwen-64-8": 8, "llama3-70b-tp8": 1}
cands = []
while len(cands) < 160:
    m = random.choice(models); q = random.choice([1, 2, 4, 8])
    lo, hi = (8, 40) if kvh[m] == 8 else (60, 320)
    n = random.randint(lo, hi)
    if random.random() < 0.3:
        a = random.randint(50, 400); b = random.randint(a + 200, 2500)
        keys = f"{a}-{b}"
    else:
        keys = str(random.randint(100, 2500))
    cands.append(f"{m}:{q}:{n}:{keys}")
def plans(tool):
    out = subprocess.run([sys.executable, tool, "--plans-only", "--batch", *cands], capture_output=True, text=True).stdout
    return [json.loads(l)["plan planned"] for l in out.splitlines() if l.startswith("{")]
old, new = plans(".old_src/v50/tools/gqa_plan_ab.py"), plans("tools/gqa_plan_ab.py")
changed = [c for c, o, n in zip(cands, old, new) if o != n]
same = [c for c, o, n in zip(cands, old, new) if o == n]
print(len(changed), len(same), file=sys.stderr)
print(" ".join(changed[:30] + same[:4]))

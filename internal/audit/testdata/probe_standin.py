import json, math, os, sys
plan = json.load(sys.stdin)
rows = {}
p = float(os.environ.get("PROBE_P", "0.9"))
for i, r in enumerate(plan["rows"]):
    if plan["mode"] == "reference":
        rows[r["question"]] = {"token": i, "p": 0.9, "text": "t"}
    else:
        rows[r["question"]] = {"token": plan["fp32"][r["question"]], "p": p, "text": "t"}
out = {"rows": rows}
f = plan.get("fidelity")
if f and plan["mode"] == "reference":
    k = f["top_k"]
    out["fidelity"] = {"top_k": k, "tokens": list(range(f["tokens"])),
                       "positions": [{"ids": list(range(k)), "logp": [math.log(0.9 / k)] * k, "rest": 0.1}] * f["tokens"]}
elif f:
    out["fidelity"] = {"positions": [{"token": b[0] if p > 0.5 else b[1], "logp": [math.log(p / len(b))] * len(b), "rest": 1 - p} for b in f["buckets"]]}
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write("%s %s %s\n" % (plan["mode"], plan["model"]["kind"], os.path.basename(plan["model"]["path"])))
print(json.dumps(out))

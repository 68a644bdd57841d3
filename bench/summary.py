#!/usr/bin/env python3
"""Side by side: Aider's benchmark loop and lemmings eval on the same exercises
(bench/bench-aider.sh writes OUT). Prints a table per harness and per exercise,
and writes OUT/summary.json."""

import json
import re
import sys
from pathlib import Path

SLOT = re.compile(r'msg="loading cache slot".*?prompt=(\d+) used=(\d+)')


def cache(log):
    prompt = used = 0
    if log.exists():
        for m in SLOT.finditer(log.read_text(errors="replace")):
            prompt += int(m.group(1))
            used += int(m.group(2))
    return {"prompt": prompt, "used": used, "share": round(used / prompt, 3) if prompt else 0}


def totals(rows):
    n = len(rows) or 1
    keys = ("calls", "prompt_tokens", "completion_tokens", "model_seconds")
    t = {k: round(sum(r[k] for r in rows) / n, 1) for k in keys}
    t["exercises"] = len(rows)
    t["pass1"] = sum(r["pass1"] for r in rows)
    t["pass2"] = sum(r["pass2"] for r in rows)
    return t


def main(out, model="?"):
    out = Path(out)
    aider = json.loads((out / "aider" / "aider.json").read_text())["results"]
    lem = json.loads((out / "lemmings" / "results.json").read_text())["results"]
    lrows = [{"id": r["id"], "pass1": r.get("pass1", False), "pass2": r.get("pass2", False), "calls": r.get("calls", 0),
              "prompt_tokens": r.get("prompt_tokens", 0), "completion_tokens": r.get("completion_tokens", 0),
              "model_seconds": r.get("model_seconds", 0.0), "status": r.get("status")} for r in lem if r.get("status") in ("passed", "failed")]
    summary = {"model": model, "aider": totals(aider), "lemmings": totals(lrows),
               "cache": {"aider": cache(out / "server-aider.log"), "lemmings": cache(out / "server-lemmings.log")},
               "per_exercise": {"aider": aider, "lemmings": lrows}}
    a, l = summary["aider"], summary["lemmings"]
    print(f"model {model}: per exercise, means")
    print("harness   exercises pass@1 pass@2 calls/ex prompt/ex completion/ex model-s/ex cache-share")
    for name, t in (("aider", a), ("lemmings", l)):
        c = summary["cache"][name]["share"]
        print(f"{name:9} {t['exercises']:9} {t['pass1']:6} {t['pass2']:6} {t['calls']:8} {t['prompt_tokens']:9} {t['completion_tokens']:13} {t['model_seconds']:10} {c:11}")
    if a["model_seconds"]:
        print(f"lemmings' model time per exercise is {l['model_seconds'] / a['model_seconds']:.2f}x Aider's; "
              f"pass@2 {l['pass2']} vs {a['pass2']}")
    print("\nexercise                  aider: pass calls  prompt  compl model-s | lemmings: pass calls  prompt  compl model-s")
    byid = {r["id"]: r for r in lrows}

    def cols(r):
        if not r:
            return f"{'-':>4} {'-':>5} {'-':>7} {'-':>6} {'-':>7}"
        mark = "@1" if r.get("pass1") else "@2" if r.get("pass2") else "--"
        if r.get("timed_out"):
            mark += "!"  # an attempt ran out of its wall time
        return f"{mark:>4} {r['calls']:5} {r['prompt_tokens']:7} {r['completion_tokens']:6} {r['model_seconds']:7.1f}"
    for r in aider:
        print(f"{r['id']:25} {cols(r)} | {cols(byid.get(r['id']))}")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main(*sys.argv[1:3])

#!/usr/bin/env python3
"""Side by side: Aider's benchmark loop and lemmings eval on the same exercises or tasks
(bench/bench-aider.sh writes OUT). Prints a table per harness and per exercise or task,
and writes OUT/summary.json.

Harnesses are the folders of OUT that hold results: aider/ (the exercises), aider-files/
and aider-map/ (tasks from real history: Aider given the files the real change touched, or
its repository map alone), each with aider.json; lemmings/ with results.json."""

import json
import re
import sys
from pathlib import Path

SLOT = re.compile(r'msg="loading cache slot".*?prompt=(\d+) used=(\d+)')
AIDERS = ("aider", "aider-files", "aider-map")


def cache(log):
    prompt = used = 0
    if log.exists():
        for m in SLOT.finditer(log.read_text(errors="replace")):
            prompt += int(m.group(1))
            used += int(m.group(2))
    return {"prompt": prompt, "used": used, "share": round(used / prompt, 3) if prompt else 0}


def totals(rows):
    n = len(rows) or 1
    keys = ("calls", "prompt_tokens", "completion_tokens", "model_seconds", "wall_seconds")
    t = {k: round(sum(r.get(k, 0) for r in rows) / n, 1) for k in keys}
    t["exercises"] = len(rows)
    t["pass1"] = sum(r["pass1"] for r in rows)
    t["pass2"] = sum(r["pass2"] for r in rows)
    loc = [r["localisation"] for r in rows if r.get("localisation")]
    if loc:
        t["localised"] = sum(bool(l.get("hit")) for l in loc)
    return t


def aider_rows(path):
    rows = json.loads(path.read_text())["results"]
    for r in rows:
        r.setdefault("wall_seconds", r.get("duration", 0.0))
    return rows


def lemmings_rows(path):
    lem = json.loads(path.read_text())["results"]
    return [{"id": r["id"], "pass1": r.get("pass1", False), "pass2": r.get("pass2", False), "calls": r.get("calls", 0),
             "prompt_tokens": r.get("prompt_tokens", 0), "completion_tokens": r.get("completion_tokens", 0),
             "model_seconds": r.get("model_seconds", 0.0), "wall_seconds": r.get("wall_seconds", 0.0),
             "status": r.get("status"), "localisation": r.get("localisation")}
            for r in lem if r.get("status") in ("passed", "failed")]


def harnesses(out):
    found = {}
    for name in AIDERS:
        p = out / name / "aider.json"
        if p.exists():
            found[name] = aider_rows(p)
    p = out / "lemmings" / "results.json"
    if p.exists():
        found["lemmings"] = lemmings_rows(p)
    return found


def main(out, model="?"):
    out = Path(out)
    found = harnesses(out)
    if not found:
        sys.exit(f"summary: no results under {out} (aider*/aider.json, lemmings/results.json)")
    summary = {"model": model, **{name: totals(rows) for name, rows in found.items()},
               "cache": {name: cache(out / f"server-{name}.log") for name in found},
               "per_exercise": found}
    print(f"model {model}: per exercise or task, means")
    print("harness      exercises pass@1 pass@2 calls/ex prompt/ex completion/ex model-s/ex wall-s/ex cache-share localised")
    for name in found:
        t, c = summary[name], summary["cache"][name]["share"]
        loc = f"{t['localised']}/{t['exercises']}" if "localised" in t else "-"
        print(f"{name:12} {t['exercises']:9} {t['pass1']:6} {t['pass2']:6} {t['calls']:8} {t['prompt_tokens']:9} "
              f"{t['completion_tokens']:13} {t['model_seconds']:10} {t['wall_seconds']:9} {c:11} {loc:>9}")
    aiders = [n for n in found if n != "lemmings"]
    if "lemmings" in found:
        lem = summary["lemmings"]
        for a in aiders:
            t = summary[a]
            if t["model_seconds"] and t["wall_seconds"]:
                print(f"lemmings against {a}: model time {lem['model_seconds'] / t['model_seconds']:.2f}x, "
                      f"wall {lem['wall_seconds'] / t['wall_seconds']:.2f}x; pass@2 {lem['pass2']} vs {t['pass2']}")

    def cols(r):
        if not r:
            return f"{'-':>4} {'-':>5} {'-':>7} {'-':>6} {'-':>7} {'-':>7}"
        mark = "@1" if r.get("pass1") else "@2" if r.get("pass2") else "--"
        if r.get("timed_out"):
            mark += "!"  # an attempt ran out of its wall time
        if r.get("localisation") is not None:
            mark += "*" if r["localisation"].get("hit") else ""
        return (f"{mark:>4} {r['calls']:5} {r['prompt_tokens']:7} {r['completion_tokens']:6} {r['model_seconds']:7.1f} "
                f"{r.get('wall_seconds', 0.0):7.1f}")
    names = list(found)
    print("\n(pass, calls, prompt, completion tokens, model-s, wall-s; * the first attempt changed a file the real change did)")
    print(f"{'exercise':40} " + " | ".join(f"{n:^44}" for n in names))
    ids = sorted({r["id"] for rows in found.values() for r in rows})
    by = {n: {r["id"]: r for r in rows} for n, rows in found.items()}
    for i in ids:
        print(f"{i:40} " + " | ".join(cols(by[n].get(i)) for n in names))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main(*sys.argv[1:3])

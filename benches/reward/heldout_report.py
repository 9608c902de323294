"""The held-out mode's report (heldout.py report): benches/reward/HELDOUT.md and
target/thirdparty/reward/heldout/results.json."""
from __future__ import annotations

import json
import os
import statistics
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402
import calibrate  # noqa: E402
import stats  # noqa: E402


def errors_delta(pr: dict) -> float:
    i = pr["inputs"]
    e = lambda t: t["runtime"] + t["error"]  # noqa: E731
    return e(i["before"]) - e(i["after"]) if i["before"] and i["after"] else 0


def calibration() -> list[float]:
    path = bench.CACHE / "heldout/calibration.json"
    return json.loads(path.read_text())["coef"] if path.exists() else [0.0, 0.0, 0.0]


def predictors(coef):
    """Each scorer of a patch, from its label record (visible side) and its pr-v3 bundle."""
    return {
        "pr-v3 r": lambda lab, pr: pr["r"],
        "pr-v3 p (calibrated)": lambda lab, pr: calibrate.p_of(pr, coef),
        "visible suite passes after": lambda lab, pr: float(lab["visible"]["failingAfter"] == 0),
        "visible suite: no test breaks": lambda lab, pr: float(lab["visible"]["broke"] == 0),
        "selected visible tests (T)": lambda lab, pr: pr["components"]["tests"],
        "Pyright Δ errors": lambda lab, pr: errors_delta(pr),
    }


SHORT = ["pr-v3 r", "p", "suite passes", "no test breaks", "selected (T)", "Δ errors"]


def usable(labels, scores):
    return [r for r in bench.manifest() if r["id"] in labels and (scores.get(r["id"], {}).get("v3") or {}).get("ok")]


def auc_rows(rows, labels, scores, coef, lines, result):
    preds = predictors(coef)
    lines += ["| project | n | good | " + " | ".join(SHORT) + " |", "|---|---|---|" + "---|" * len(SHORT)]
    groups = [(f"{n}{' (held out)' if n in bench.HELD_OUT else ''}", [r for r in rows if r["project"] == n])
              for n, *_ in bench.PROJECTS]
    groups += [("tuning five, pooled", [r for r in rows if r["project"] not in bench.HELD_OUT]),
               ("held-out two, pooled", [r for r in rows if r["project"] in bench.HELD_OUT]),
               ("all seven, pooled", rows)]
    for title, members in groups:
        if not members:
            continue
        good = sum(labels[r["id"]]["good"] for r in members)
        cells = []
        for name, f in preds.items():
            xs = [(f(labels[r["id"]], scores[r["id"]]["v3"]["reward"]), labels[r["id"]]["good"]) for r in members]
            auc, lo, hi = stats.auc_ci(xs, seed=42)
            result["auc"].setdefault(title, {})[name] = {"auc": auc, "ci": [lo, hi], "n": len(members), "good": good}
            cells.append("–" if auc != auc else f"{auc:.2f} ({lo:.2f}–{hi:.2f})")
        lines.append(f"| {title} | {len(members)} | {good} | " + " | ".join(cells) + " |")


def family_rows(rows, labels, scores, lines):
    lines += ["| family | n | good (hidden) | mean r, good | mean r, bad | visible suite passes, good / bad |",
              "|---|---|---|---|---|---|"]
    for fam in bench.PLAN:
        members = [r for r in rows if r["family"] == fam]
        if not members:
            continue
        g = [r for r in members if labels[r["id"]]["good"]]
        b = [r for r in members if not labels[r["id"]]["good"]]
        mean = lambda xs: f"{statistics.mean(scores[r['id']]['v3']['reward']['r'] for r in xs):+.2f}" if xs else "–"  # noqa: E731
        vis = lambda xs: sum(labels[r["id"]]["visible"]["failingAfter"] == 0 for r in xs)  # noqa: E731
        lines.append(f"| {fam} | {len(members)} | {len(g)} | {mean(g)} | {mean(b)} | "
                     f"{vis(g)}/{len(g)} · {vis(b)}/{len(b)} |")


BINS = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0001]


def calibration_rows(rows, labels, scores, coef, lines, result):
    """Brier and a reliability table of p on the held-out two (and, for reference, the
    tuning five the coefficients were fitted on)."""
    for title, members in (("held-out two", [r for r in rows if r["project"] in bench.HELD_OUT]),
                           ("tuning five (fit)", [r for r in rows if r["project"] not in bench.HELD_OUT])):
        pairs = [(calibrate.p_of(scores[r["id"]]["v3"]["reward"], coef), labels[r["id"]]["good"]) for r in members]
        if not pairs:
            continue
        base = sum(g for _, g in pairs) / len(pairs)
        tune = [labels[r["id"]]["good"] for r in rows if r["project"] not in bench.HELD_OUT]
        rate = sum(tune) / len(tune) if tune else 0.5
        b, b0 = calibrate.brier(pairs), calibrate.brier([(rate, g) for _, g in pairs])
        result["calibration"][title] = {"n": len(pairs), "brier": round(b, 4), "brierConstant": round(b0, 4),
                                        "goodRate": round(base, 4)}
        lines += ["", f"**{title}**: n = {len(pairs)}, good rate {base:.2f}; Brier {b:.3f} "
                  f"(the tuning five's good rate {rate:.2f} as a constant p: {b0:.3f}).", "",
                  "| p bin | count | mean p | observed good rate |", "|---|---|---|---|"]
        for lo, hi in zip(BINS, BINS[1:]):
            inb = [(p, g) for p, g in pairs if lo <= p < hi]
            if inb:
                lines.append(f"| {lo:.1f}–{min(hi, 1):.1f} | {len(inb)} | {statistics.mean(p for p, _ in inb):.2f} | "
                             f"{sum(g for _, g in inb) / len(inb):.2f} |")


def static_z(pr: dict) -> float:
    c = pr["components"]
    return round(c["diagnostics"] + c["remaining"] + c["structural"], 9)


def static_rows(rows, labels, scores, lines, result):
    """Where the visible tests cannot see: the patches after which the whole visible suite
    passes, and those for which pr-v3 selected no visible test. How many are bad by the hidden
    tests, how often the static terms Z (diagnostics + remaining + structural) moved r, and
    whether r, Z or the error count still rank them (AUC, 95 % CI)."""
    lines += ["| subset | n | bad (hidden) | Z < 0: n, bad | Z > 0: n, bad | AUC r | AUC Z | AUC Δ errors |",
              "|---|---|---|---|---|---|---|---|"]
    subsets = (("visible suite passes after", lambda lab, pr: lab["visible"]["failingAfter"] == 0),
               ("no selected visible test ran", lambda lab, pr: not (pr["inputs"]["tests"] or {}).get("ran")))
    for title, test in subsets:
        members = [r for r in rows if test(labels[r["id"]], scores[r["id"]]["v3"]["reward"])]
        prs = [(scores[r["id"]]["v3"]["reward"], labels[r["id"]]["good"]) for r in members]
        bad = sum(not g for _, g in prs)
        neg = [g for pr, g in prs if static_z(pr) < 0]
        pos = [g for pr, g in prs if static_z(pr) > 0]
        cells = []
        for f in (lambda pr: pr["r"], static_z, errors_delta):
            auc, lo, hi = stats.auc_ci([(f(pr), g) for pr, g in prs], seed=42)
            cells.append("–" if auc != auc else f"{auc:.2f} ({lo:.2f}–{hi:.2f})")
        result["static"][title] = {"n": len(prs), "bad": bad, "zNeg": [len(neg), neg.count(False)],
                                   "zPos": [len(pos), pos.count(False)], "auc": cells}
        lines.append(f"| {title} | {len(prs)} | {bad} | {len(neg)}, {neg.count(False)} | "
                     f"{len(pos)}, {pos.count(False)} | " + " | ".join(cells) + " |")


def score_cost_rows(rows, scores, lines, result):
    """The score step's own timings: its warm checks and each session's first check."""
    lines += ["| project | warm pr-v3 check (median) | first check of a session (median) |", "|---|---|---|"]
    for name, *_ in bench.PROJECTS:
        mine = [r for r in rows if r["project"] == name]
        sessions = {}
        for r in mine:
            sessions.setdefault(r["base"] or "", []).append(r)
        first = [min(s, key=lambda r: r["id"]) for s in sessions.values()]
        warm = [scores[r["id"]]["v3"]["seconds"] for r in mine if r not in first]
        firsts = [scores[r["id"]]["v3"]["seconds"] + scores[r["id"]].get("sessionStart", 0) for r in first]
        med = lambda xs: f"{statistics.median(xs):.1f} s ({len(xs)})" if xs else "–"  # noqa: E731
        result["scoreCost"][name] = {"warm": warm, "first": firsts}
        lines.append(f"| {name} | {med(warm)} | {med(firsts)} |")


def cost_rows(lines, result):
    """heldout.py cost: per project, medians over its patches of the four costs measured one
    after the other on each patch, and the two goals of issue 42."""
    found = bench.load("heldout/cost.json")
    if not found:
        return
    doc = heldout_cost_doc()
    builds = sorted({f.get("build", "?") for f in found.values()})
    lines += [doc, "", f"lanser's build: {', '.join(builds)}.", "",
              "| project | patches | load (median) | first check of the session | warm check | one-shot, fresh copy "
              "(server start) | whole visible suite | pyright CLI | one-shot / suite | warm / (suite + CLI) "
              "| one-shot r = warm r |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    med = statistics.median
    met_one, met_warm, names = [], [], []
    for name, *_ in bench.PROJECTS:
        f = found.get(name)
        if not f or not f["patches"]:
            continue
        ps = f["patches"]
        warm, shot = med(p["warm"] for p in ps), med(p["oneshot"] for p in ps)
        suite, cli = med(p["suite"] for p in ps), med(p["cli"] for p in ps)
        load = med(p["load"] for p in ps)
        starts = [(p.get("oneshotTiming") or {}).get("serverStartMs") for p in ps]
        start = f" ({med(x for x in starts if x is not None) / 1000:.1f} s)" if any(x is not None for x in starts) else ""
        same = sum(p["oneshotR"] == p["warmR"] and p["oneshotExit"] == 0 for p in ps)
        r1, r2 = shot / suite, warm / (suite + cli)
        met_one.append(r1 <= 1)
        met_warm.append(r2 <= 0.2)
        names.append(name)
        result["cost"][name] = {"warm": warm, "oneshot": shot, "suite": suite, "cli": cli, "load": load,
                                "first": f["first"], "oneshotOverSuite": round(r1, 3),
                                "warmOverSuiteCli": round(r2, 3), "sameR": same, "n": len(ps)}
        lines.append(f"| {name} | {len(ps)} | {load:.1f} | {f['first']:.1f} s | {warm:.2f} s | {shot:.2f} s{start} | "
                     f"{suite:.2f} s | {cli:.2f} s | {'**' if r1 <= 1 else ''}{r1:.3f}{'**' if r1 <= 1 else ''} | "
                     f"{'**' if r2 <= 0.2 else ''}{r2:.3f}{'**' if r2 <= 0.2 else ''} | {same} of {len(ps)} |")
    ones = [result["cost"][n]["oneshotOverSuite"] for n in names]
    warms = [result["cost"][n]["warmOverSuiteCli"] for n in names]
    lines += ["", f"One-shot ≤ the whole visible suite (ratio ≤ 1, bold): {sum(met_one)} of {len(names)} projects "
              f"(median ratio {med(ones):.2f}). Warm ≤ 0.2 × (suite + CLI) (bold): {sum(met_warm)} of {len(names)} "
              f"(median ratio {med(warms):.2f})."]


def heldout_cost_doc() -> str:
    import heldout

    out = []
    for line in textwrap.dedent("    " + heldout.cost.__doc__.strip()).splitlines():
        if line.startswith("- ") or not out or not line.strip() or not out[-1]:
            out.append(line.strip())
        else:
            out[-1] += " " + line.strip()
    return "\n".join(out).replace("`per_project`", "three")


def report():
    split = bench.load("heldout/split.json")
    labels = bench.load("heldout/labels.json")
    scores = bench.load("heldout/scores.json")
    coef = calibration()
    rows = usable(labels, scores)
    result = {"scored": len(rows), "auc": {}, "calibration": {}, "static": {}, "cost": {}, "scoreCost": {},
              "coef": coef}
    quarters = int(os.environ.get("LANSER_REWARD_SAMPLE", "4"))
    lines = [f"{len(rows)} patches labelled by hidden tests and scored on the visible ones ({quarters} of 4 "
             f"quarters of each family asked, LANSER_REWARD_SAMPLE); "
             f"{sum(labels[r['id']]['good'] for r in rows)} good. `python3 benches/reward/heldout.py all`; "
             f"lanser's build: {'release' if '/release/' in bench.lanser_bin() else 'debug'}.", "",
             "## The split", "",
             "| project | unit | units hidden | tests hidden / all |", "|---|---|---|---|"]
    for name, *_ in bench.PROJECTS:
        s = split.get(name)
        if s:
            lines.append(f"| {name} | {s['level']} | {len(s['hidden'])} of {s['units']} | {s['hiddenTests']} / {s['tests']} |")
    lines += ["", "## AUC against the hidden tests (95 % bootstrap CI, 1,000 resamples)", ""]
    auc_rows(rows, labels, scores, coef, lines, result)
    lines += ["", "## Per family", ""]
    family_rows(rows, labels, scores, lines)
    lines += ["", "## Calibration: p", "", f"Coefficients (calibrate.py, fitted on the tuning five): {coef}."]
    calibration_rows(rows, labels, scores, coef, lines, result)
    lines += ["", "## Where the visible tests cannot see", "", static_rows.__doc__.replace("\n    ", " "), ""]
    static_rows(rows, labels, scores, lines, result)
    lines += ["", "## Cost per patch, one period (heldout.py cost)", ""]
    cost_rows(lines, result)
    lines += ["", "## Cost per patch in the scoring run", ""]
    score_cost_rows(rows, scores, lines, result)
    body = "\n".join(lines) + "\n"
    notes = Path(__file__).with_name("HELDOUT.md")
    head = notes.read_text().split("<!-- generated -->")[0] if notes.exists() else "# Held-out tests\n\n"
    notes.write_text(head + "<!-- generated -->\n\n" + body)
    (bench.CACHE / "heldout/results.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    print(body)

"""pr-v3's calibration (issue 42, part 3): `processReward.p`, the probability that a patch is
good, from two of pr-v3's terms:

    p = σ(c0 + c1·T + c2·clip(Z, −3, 3))      T = components.tests
                                              Z = components.diagnostics + remaining + structural

a logistic regression (Newton's method, a small L2 penalty on c1 and c2) fitted on the held-out
mode's output (heldout.py: target/thirdparty/reward/heldout/{labels,scores}.json) of the five
tuning projects only; the label is the hidden tests' (good: every hidden test passes after).

    python3 benches/reward/calibrate.py      # fit, print the Rust constants, write calibration.json

src/reward/v3.rs holds the printed constants (`CALIBRATION`); `p_of` here is its twin.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402

TUNING = ["more-itertools", "toolz", "cachetools", "idna", "boltons"]
L2 = 0.1
CLIP = 3.0


def features(reward: dict) -> list[float]:
    c = reward["components"]
    z = c["diagnostics"] + c["remaining"] + c["structural"]
    return [1.0, c["tests"], max(-CLIP, min(CLIP, z))]


def sigmoid(t: float) -> float:
    return 1 / (1 + math.exp(-t)) if t >= 0 else math.exp(t) / (1 + math.exp(t))


def p_of(reward: dict, coef: list[float]) -> float:
    """p as src/reward/v3.rs computes it (rounded to 9 decimals there too)."""
    return round(sigmoid(sum(c * x for c, x in zip(coef, features(reward)))), 9)


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """a·x = b by Gaussian elimination with partial pivoting (a is small and positive definite)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(xs: list[list[float]], ys: list[bool], l2: float = L2, iters: int = 50) -> list[float]:
    """The penalized maximum-likelihood logistic coefficients (no penalty on the intercept)."""
    k = len(xs[0])
    w = [0.0] * k
    for _ in range(iters):
        grad = [(l2 * w[j] if j else 0.0) for j in range(k)]
        hess = [[(l2 if i == j and i else 0.0) for j in range(k)] for i in range(k)]
        for x, y in zip(xs, ys):
            p = sigmoid(sum(a * b for a, b in zip(w, x)))
            for i in range(k):
                grad[i] += (p - float(y)) * x[i]
                for j in range(k):
                    hess[i][j] += p * (1 - p) * x[i] * x[j]
        step = solve(hess, grad)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-10:
            break
    return [round(c, 4) for c in w]


def brier(pairs: list[tuple[float, bool]]) -> float:
    return sum((p - float(y)) ** 2 for p, y in pairs) / len(pairs)


def rows(projects: list[str]) -> list[tuple[dict, bool, str]]:
    """(pr-v3 reward, hidden label, id) of every patch of `projects` labelled and scored."""
    labels = bench.load("heldout/labels.json")
    scores = bench.load("heldout/scores.json")
    out = []
    for pid in (r["id"] for r in bench.manifest()):  # LANSER_REWARD_SAMPLE's patches
        s = (scores.get(pid) or {}).get("v3") or {}
        if pid.split("/")[0] in projects and pid in labels and s.get("ok") and s["reward"]["inputs"]["tests"]:
            out.append((s["reward"], labels[pid]["good"], pid))
    return out


def main():
    data = rows(TUNING)
    coef = fit([features(r) for r, _, _ in data], [g for _, g, _ in data])
    good = sum(g for _, g, _ in data)
    result = {"coef": coef, "l2": L2, "clip": CLIP, "n": len(data), "good": good,
              "projects": TUNING,
              "brierTuning": round(brier([(p_of(r, coef), g) for r, g, _ in data]), 4)}
    (bench.CACHE / "heldout/calibration.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    print(f"const CALIBRATION: [f64; 3] = [{coef[0]}, {coef[1]}, {coef[2]}];")


if __name__ == "__main__":
    main()

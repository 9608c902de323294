"""AUC (Mann–Whitney: the chance a good patch outranks a bad one, ties counting half) and
its percentile bootstrap interval, resampling good and bad patches separately."""
from __future__ import annotations

import random


def auc(xs: list[tuple[float, bool]]) -> float:
    good = [s for s, g in xs if g]
    bad = [s for s, g in xs if not g]
    if not good or not bad:
        return float("nan")
    wins = 0.0
    for g in good:
        for b in bad:
            wins += 1.0 if g > b else 0.5 if g == b else 0.0
    return wins / (len(good) * len(bad))


def auc_ci(xs, seed: int = 0, n: int = 1000, level: float = 0.95):
    rng = random.Random(seed)
    good = [x for x in xs if x[1]]
    bad = [x for x in xs if not x[1]]
    point = auc(xs)
    if not good or not bad:
        return point, float("nan"), float("nan")
    boots = []
    for _ in range(n):
        sample = [rng.choice(good) for _ in good] + [rng.choice(bad) for _ in bad]
        boots.append(auc(sample))
    boots.sort()
    lo = boots[int((1 - level) / 2 * n)]
    hi = boots[min(n - 1, int((1 + level) / 2 * n))]
    return round(point, 4), round(lo, 4), round(hi, 4)

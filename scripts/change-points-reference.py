#!/usr/bin/env python3
"""Record Apache Otava's change points on seeded synthetic series.

stagediff's change-point module (server/src/analysis/change-points.ts) must give the
same answers as Apache Otava 0.8.0. This script builds seeded series of the kinds otava is
meant for (a step in the mean, a step in the variance, no change, several steps, very short
series, a constant), at several noise levels, runs otava's own `compute_change_points` on
each, and writes the series and otava's answers to
fixtures/reference/change-points/answers.json.

It installs nothing. Run it with a Python that has otava installed, for example:

    python3 -m venv /tmp/otava-venv
    /tmp/otava-venv/bin/pip install apache-otava==0.8.0
    /tmp/otava-venv/bin/python scripts/change-points-reference.py

Values are rounded to 4 decimals before otava sees them, so the recorded series is exactly the
input otava analysed (JSON keeps doubles exactly through repr).
"""

import json
import os
import sys
from importlib.metadata import version

import numpy as np
from otava.analysis import compute_change_points

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "fixtures",
    "reference",
    "change-points",
    "answers.json",
)


def rounded(values):
    return [round(float(v), 4) for v in values]


def make_cases():
    cases = []

    def add(name, kind, series, **opts):
        cases.append({"name": name, "kind": kind, "options": opts, "series": rounded(series)})

    seed = 40
    # A step in the mean at several sizes, lengths and noise levels.
    for n in (5, 8, 12, 20, 40, 80, 150, 200):
        for noise in (0.005, 0.02, 0.05):
            for step in (0.03, 0.10):
                seed += 1
                rng = np.random.default_rng(seed)
                at = max(1, int(n * rng.uniform(0.3, 0.7)))
                base = 100.0 * np.ones(n)
                base[at:] *= 1.0 + step
                add(
                    f"mean-step-n{n}-noise{noise}-step{step}",
                    "mean-step",
                    base * (1.0 + noise * rng.standard_normal(n)),
                )
    # A step in the variance only.
    for n in (30, 60, 120, 200):
        for ratio in (3.0, 8.0):
            seed += 1
            rng = np.random.default_rng(seed)
            at = n // 2
            sd = np.where(np.arange(n) < at, 1.0, ratio)
            add(f"variance-step-n{n}-ratio{ratio}", "variance-step", 50.0 + sd * rng.standard_normal(n))
    # No change: A/A noise.
    for n in (5, 10, 25, 50, 100, 200):
        for noise in (0.01, 0.05):
            seed += 1
            rng = np.random.default_rng(seed)
            add(f"none-n{n}-noise{noise}", "none", 1000.0 * (1.0 + noise * rng.standard_normal(n)))
    # Several steps, up and down.
    for n in (60, 120, 200):
        for noise in (0.01, 0.03):
            seed += 1
            rng = np.random.default_rng(seed)
            cuts = np.sort(rng.choice(np.arange(8, n - 8), size=3, replace=False))
            levels = [10.0, 11.5, 9.0, 12.0]
            base = np.empty(n)
            prev = 0
            for k, c in enumerate(list(cuts) + [n]):
                base[prev:c] = levels[k]
                prev = c
            add(f"multi-step-n{n}-noise{noise}", "multi-step", base * (1.0 + noise * rng.standard_normal(n)))
    # Constant series.
    add("constant-n20", "constant", [42.0] * 20)
    add("constant-n7", "constant", [3.5] * 7)
    # Non-default options: window length, p-value threshold, minimum magnitude.
    for n in (80, 200):
        seed += 1
        rng = np.random.default_rng(seed)
        base = 100.0 * np.ones(n)
        base[n // 3 :] *= 1.04
        base[2 * n // 3 :] *= 0.98
        series = base * (1.0 + 0.01 * rng.standard_normal(n))
        add(f"options-window20-n{n}", "options", series, window_len=20)
        add(f"options-pvalue0.05-n{n}", "options", series, max_pvalue=0.05)
        add(f"options-magnitude0.03-n{n}", "options", series, min_magnitude=0.03)
        add(f"options-window8-pvalue0.01-n{n}", "options", series, window_len=8, max_pvalue=0.01)
    # Coarse values with many ties (latencies printed in whole milliseconds), where candidate splits tie.
    for n in (12, 40, 100):
        for step in (0, 2):
            seed += 1
            rng = np.random.default_rng(seed)
            base = np.full(n, 20.0)
            base[n // 2 :] += step
            add(f"ties-n{n}-step{step}", "ties", np.round(base + rng.normal(0, 0.8, n)))
    add("ties-alternating-n30", "ties", [10.0, 11.0] * 15)
    add("ties-two-levels-n24", "ties", [5.0] * 12 + [6.0] * 12)
    return cases


def main():
    cases = make_cases()
    for case in cases:
        change_points, _ = compute_change_points(list(case["series"]), **case["options"])
        case["changePoints"] = [
            {
                "index": int(cp.index),
                "pValue": float(cp.stats.pvalue),
                "meanBefore": float(cp.stats.mean_1),
                "meanAfter": float(cp.stats.mean_2),
                "forwardChangePercent": float(cp.stats.forward_change_percent()),
            }
            for cp in change_points
        ]
    doc = {
        "tool": f"apache-otava {version('apache-otava')}",
        "numpy": version("numpy"),
        "scipy": version("scipy"),
        "python": sys.version.split()[0],
        "defaults": {"window_len": 50, "max_pvalue": 0.001, "min_magnitude": 0.0},
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()

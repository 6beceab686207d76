#!/usr/bin/env python3
"""Record Apache Otava's change points on the demo service's 20-stage series.

fixtures/demo-series/NN-<version>/wrk.txt holds one wrk run per stage (recorded by
fixtures/demo-service/series.sh). This script reads, per stage in order, the two figures the
stage table takes from a wrk run, as wrk printed them: Requests/sec (req/s) and the 99% line of
the latency distribution (in ms: wrk's us / ms / s suffix converted), runs otava's own
`compute_change_points` on each series with its defaults, and writes the series and otava's
answers to fixtures/demo-series/otava.json.

It installs nothing. Run it with a Python that has otava installed:

    python3 -m venv /root/.cache/stagediff/otava
    /root/.cache/stagediff/otava/bin/pip install apache-otava==0.8.0
    /root/.cache/stagediff/otava/bin/python scripts/demo-series-otava.py
"""

import json
import os
import re
import sys
from importlib.metadata import version

from otava.analysis import compute_change_points

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "demo-series")
UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def figures(path):
    text = open(path, encoding="utf-8").read()
    rps = float(re.search(r"^Requests/sec:\s+([\d.]+)\s*$", text, re.M).group(1))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    return rps, float(m.group(1)) * UNIT_MS[m.group(2)]


def main():
    stages = sorted(d for d in os.listdir(HERE) if re.match(r"^\d\d-", d))
    rows = [figures(os.path.join(HERE, s, "wrk.txt")) for s in stages]
    series = {"rps": [r[0] for r in rows], "p99": [r[1] for r in rows]}
    answers = {}
    for figure, values in series.items():
        change_points, _ = compute_change_points(list(values))
        answers[figure] = [
            {
                "index": int(cp.index),
                "stage": stages[int(cp.index)],
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
        "options": "compute_change_points defaults: window_len 50, max_pvalue 0.001, min_magnitude 0",
        "stages": stages,
        "series": series,
        "changePoints": answers,
    }
    out = os.path.join(HERE, "otava.json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.normpath(out)}: " + "; ".join(f"{k}: {[c['stage'] for c in v]}" for k, v in answers.items()))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench/plot.py: a PNG of each system's % of the bandwidth floor per workload.

  python3 bench/plot.py results.json pct_floor.png

Only the large workloads (the launch-bound ones have no meaningful floor).
Needs matplotlib; bars are drawn only for what was measured.
"""

import argparse
import json
import sys

SYSTEMS = [("fusec", "fusec", "#1f77b4"), ("fusec_per_op", "fusec per-op", "#aec7e8"),
           ("eager", "PyTorch eager", "#ff7f0e"), ("builtin", "PyTorch builtin", "#ffbb78"),
           ("compiled", "torch.compile", "#2ca02c")]


def series(doc):
    """Workload labels and, per system, its % of the floor (None: not measured)."""
    rows = [r for r in doc["workloads"] if not r.get("launch_bound")]
    labels = [r.get("label", r["key"]) for r in rows]
    data = {k: [r["results"].get(k, {}).get("pct_floor") for r in rows] for k, _, _ in SYSTEMS}
    return labels, data


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, data = series(doc)
    systems = [s for s in SYSTEMS if any(v is not None for v in data[s[0]])]
    n, k = len(labels), max(len(systems), 1)
    fig, ax = plt.subplots(figsize=(11, max(3.0, 1.0 + 0.15 * n * k)))
    h = 0.8 / k
    for i, (key, title, color) in enumerate(systems):
        ys = [j + (i - (k - 1) / 2) * h for j in range(n)]
        vals = [v if v is not None else 0 for v in data[key]]
        ax.barh(ys, vals, height=h, label=title, color=color)
        for y, v in zip(ys, data[key]):
            if v is not None:
                ax.text(v + 0.5, y, "%.0f" % v, va="center", fontsize=6)
    ax.axvline(100, color="black", linewidth=0.8)
    ax.axvline(90, color="gray", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("% of the bandwidth floor (min bytes / copy bandwidth), higher is better")
    m = doc.get("meta", {})
    ax.set_title("%s, %s" % (m.get("device", "?"), m.get("date", "?")), fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("png")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        doc = json.load(f)
    plot(doc, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Turns the workload benchmark's JSON (scripts/bench-device.sh) into a bar chart of graph/baseline ratios.

Usage: scripts/plot-bench.py workloads.json chart.png|chart.svg

With matplotlib installed, any format matplotlib knows is written. Without it (Debian bookworm's base image has none),
the chart is written as a hand-made SVG; a .png path then becomes .svg next to it. Workloads whose results were wrong
are drawn in grey with "wrong" instead of a ratio: their timings mean nothing.
"""
import json
import os
import sys
from xml.sax.saxutils import escape

TARGET_RATIO = 1.10  # issue "Performance": graph/baseline at most 1.10 for workloads 2 to 7


def load(path):
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    rows = []
    for workload in data["workloads"]:
        ratio = workload.get("ratio", 0) if workload.get("passed") else None
        rows.append((workload["name"], ratio))
    machine = data.get("machine", {})
    title = "graph / baseline GPU time, {} ({} {}){}{}".format(
        machine.get("device_name", "?"), machine.get("driver_name", ""), machine.get("driver_info", ""),
        ", commit " + data["commit"] if data.get("commit") else "", ", smoke sizes" if data.get("smoke") else "")
    return title, rows


def plot_matplotlib(title, rows, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [name for name, _ in rows]
    values = [ratio if ratio is not None else 0 for _, ratio in rows]
    colors = ["#3b75af" if ratio is not None else "#aaaaaa" for _, ratio in rows]
    fig, axis = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.5))
    bars = axis.barh(names, values, color=colors)
    axis.invert_yaxis()
    axis.axvline(1.0, color="black", linewidth=1)
    axis.axvline(TARGET_RATIO, color="#c0392b", linestyle="--", linewidth=1, label="target {:.2f}".format(TARGET_RATIO))
    for bar, (_, ratio) in zip(bars, rows):
        label = "{:.2f}".format(ratio) if ratio is not None else "wrong"
        axis.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, " " + label, va="center", fontsize=9)
    axis.set_xlabel("graph / baseline (lower is better; 1 = as fast as hand-written indirect dispatch)")
    axis.set_title(title, fontsize=10)
    axis.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)


def plot_svg(title, rows, out_path):
    label_width, bar_area, row_height, top = 190, 520, 26, 60
    height = top + row_height * len(rows) + 50
    width = label_width + bar_area + 80
    largest = max([ratio for _, ratio in rows if ratio is not None] + [TARGET_RATIO, 1.0])
    scale = bar_area / (largest * 1.05)
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">'.format(width, height),
        '<rect width="100%" height="100%" fill="white"/>',
        '<text x="10" y="22" font-size="13">{}</text>'.format(escape(title)),
    ]
    for index, (name, ratio) in enumerate(rows):
        y = top + index * row_height
        parts.append('<text x="{}" y="{}" text-anchor="end">{}</text>'.format(label_width - 8, y + 16, escape(name)))
        if ratio is None:
            parts.append('<rect x="{}" y="{}" width="4" height="18" fill="#aaaaaa"/>'.format(label_width, y + 3))
            parts.append('<text x="{}" y="{}" fill="#c0392b">wrong</text>'.format(label_width + 10, y + 16))
            continue
        bar = ratio * scale
        parts.append('<rect x="{}" y="{}" width="{:.1f}" height="18" fill="#3b75af"/>'.format(label_width, y + 3, bar))
        parts.append('<text x="{:.1f}" y="{}">{:.2f}</text>'.format(label_width + bar + 4, y + 16, ratio))
    bottom = top + row_height * len(rows)
    for value, color, dash in ((1.0, "black", ""), (TARGET_RATIO, "#c0392b", ' stroke-dasharray="5,3"')):
        x = label_width + value * scale
        parts.append('<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="{3}"{4}/>'.format(x, top - 4, bottom, color, dash))
    parts.append('<text x="{:.1f}" y="{}" fill="#c0392b" font-size="11">target {:.2f}</text>'.format(
        label_width + TARGET_RATIO * scale + 4, top - 8, TARGET_RATIO))
    parts.append('<text x="{}" y="{}" font-size="11">graph / baseline GPU time (lower is better; 1 = as fast as hand-written '
                 'indirect dispatch)</text>'.format(label_width, bottom + 30))
    parts.append("</svg>")
    with open(out_path, "w", encoding="utf-8") as file:
        file.write("\n".join(parts) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    title, rows = load(sys.argv[1])
    out_path = sys.argv[2]
    try:
        import matplotlib  # noqa: F401
        have_matplotlib = True
    except ImportError:
        have_matplotlib = False
    if have_matplotlib:
        plot_matplotlib(title, rows, out_path)
    else:
        if not out_path.endswith(".svg"):
            out_path = os.path.splitext(out_path)[0] + ".svg"
            print("matplotlib is not installed: writing an SVG instead")
        plot_svg(title, rows, out_path)
    print("wrote " + out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Turns the workload benchmark's JSON (scripts/bench-device.sh) into a bar chart of graph/baseline ratios.

Usage: scripts/plot-bench.py workloads.json chart.png|chart.svg

With matplotlib installed, any format matplotlib knows is written. Without it (Debian bookworm's base image has none),
a .png is drawn with the standard library alone (zlib, a 5x7 bitmap font, text in capitals) and a .svg by hand.
Workloads whose results were wrong are drawn in grey with "wrong" instead of a ratio: their timings mean nothing.
"""
import json
import os
import struct
import sys
import zlib
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


# 5x7 glyphs, one string of 7 rows of 5 columns per character ('#' set). Text is drawn in capitals.
FONT_ROWS = {
    "A": ".###.#...##...#######...##...##...#", "B": "####.#...##...#####.#...##...#####.",
    "C": ".###.#...##....#....#....#...#.###.", "D": "####.#...##...##...##...##...#####.",
    "E": "######....#....####.#....#....#####", "F": "######....#....####.#....#....#....",
    "G": ".###.#...##....#.####...##...#.####", "H": "#...##...##...#######...##...##...#",
    "I": ".###...#....#....#....#....#...###.", "J": "..###...#....#....#....#.#..#..##..",
    "K": "#...##..#.#.#..##...#.#..#..#.#...#", "L": "#....#....#....#....#....#....#####",
    "M": "#...###.###.#.##...##...##...##...#", "N": "#...##...###..##.#.##..###...##...#",
    "O": ".###.#...##...##...##...##...#.###.", "P": "####.#...##...#####.#....#....#....",
    "Q": ".###.#...##...##...##.#.##..#..##.#", "R": "####.#...##...#####.#.#..#..#.#...#",
    "S": ".#####....#.....###.....#....#####.", "T": "#####..#....#....#....#....#....#..",
    "U": "#...##...##...##...##...##...#.###.", "V": "#...##...##...##...##...#.#.#...#..",
    "W": "#...##...##...##.#.##.#.##.#..#.#..", "X": "#...##...#.#.#...#...#.#.#...##...#",
    "Y": "#...##...##...#.#.#...#....#....#..", "Z": "#####....#...#...#...#...#....#####",
    "0": ".###.#...##..###.#.###..##...#.###.", "1": "..#...##....#....#....#....#...###.",
    "2": ".###.#...#....#...#...#...#...#####", "3": "#####...#...#.....#.....##...#.###.",
    "4": "...#...##..#.#.#..#.#####...#....#.", "5": "#####.....####.....#....##...#.###.",
    "6": "..##..#...#....####.#...##...#.###.", "7": "#####....#...#...#...#....#....#...",
    "8": ".###.#...##...#.###.#...##...#.###.", "9": ".###.#...##...#.####....#...#..##..",
    ".": "..........................##...##..", ",": ".....................##...#...#....",
    ":": ".....##...##.........##...##.......", "-": "................###................",
    "_": "..............................#####", "/": ".........#...#...#...#...#.........",
    "(": "...#...#...#....#....#.....#.....#.", ")": ".#.....#.....#....#....#...#...#...",
    "=": "..........#####.....#####..........", "+": ".......#....#..#####..#....#.......",
    "[": ".###..#....#....#....#....#....###.", "]": ".###....#....#....#....#....#..###.",
    "<": "...#...#...#...#.....#.....#.....#.", ">": ".#.....#.....#.....#...#...#...#...",
    ";": ".......##...##........##....#...#..",
    " ": "." * 35,
}


class Canvas:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.pixels = bytearray(b"\xff" * (width * height * 3))

    def rect(self, x, y, w, h, color):
        for row in range(max(0, int(y)), min(self.height, int(y + h))):
            start = (row * self.width + max(0, int(x))) * 3
            end = (row * self.width + min(self.width, int(x + w))) * 3
            if end > start:
                self.pixels[start:end] = bytes(color) * ((end - start) // 3)

    def text(self, x, y, string, color, scale=2, anchor_end=False):
        advance = 6 * scale
        if anchor_end:
            x -= advance * len(string)
        for index, char in enumerate(string.upper()):
            rows = FONT_ROWS.get(char, FONT_ROWS["."])
            for bit, value in enumerate(rows):
                if value == "#":
                    self.rect(x + index * advance + (bit % 5) * scale, y + (bit // 5) * scale, scale, scale, color)

    def write_png(self, path):
        raw = b"".join(b"\x00" + bytes(self.pixels[row * self.width * 3:(row + 1) * self.width * 3]) for row in range(self.height))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        with open(path, "wb") as file:
            file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)) +
                       chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def plot_png(title, rows, out_path):
    blue, grey, red, black = (0x3B, 0x75, 0xAF), (0xAA, 0xAA, 0xAA), (0xC0, 0x39, 0x2B), (0, 0, 0)
    label_width, bar_area, row_height, top = 300, 560, 28, 70
    height = top + row_height * len(rows) + 50
    width = max(label_width + bar_area + 90, 12 * len(title) + 20)
    canvas = Canvas(width, height)
    largest = max([ratio for _, ratio in rows if ratio is not None] + [TARGET_RATIO, 1.0])
    scale = bar_area / (largest * 1.05)
    canvas.text(10, 12, title, black)
    bottom = top + row_height * len(rows)
    canvas.rect(label_width + 1.0 * scale, top - 6, 2, bottom - top + 6, black)
    target_x = label_width + TARGET_RATIO * scale
    for dash in range(int(top - 6), int(bottom), 8):
        canvas.rect(target_x, dash, 2, 5, red)
    canvas.text(target_x + 6, top - 24, "target {:.2f}".format(TARGET_RATIO), red)
    for index, (name, ratio) in enumerate(rows):
        y = top + index * row_height
        canvas.text(label_width - 8, y + 7, name, black, anchor_end=True)
        if ratio is None:
            canvas.rect(label_width, y + 3, 4, 20, grey)
            canvas.text(label_width + 10, y + 7, "wrong", red)
            continue
        bar = ratio * scale
        canvas.rect(label_width, y + 3, bar, 20, blue)
        label = "{:.2f}".format(ratio)
        canvas.rect(label_width + bar + 4, y + 5, 12 * len(label) + 2, 16, (0xFF, 0xFF, 0xFF))
        canvas.text(label_width + bar + 6, y + 7, label, black)
    canvas.text(10, bottom + 20, "graph / baseline GPU time (lower is better; 1 = hand-written indirect dispatch)", black)
    canvas.write_png(out_path)


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
    elif out_path.endswith(".svg"):
        plot_svg(title, rows, out_path)
    else:
        out_path = os.path.splitext(out_path)[0] + ".png"
        plot_png(title, rows, out_path)
    print("wrote " + out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

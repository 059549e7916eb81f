#!/usr/bin/env python3
"""Summarises scripts/gpu/ab.sh's ab.jsonl: per workload, the mean graph time of each layer folder, every run, and the
change of each folder against the first one named.

Usage: scripts/gpu/ab-compare.py ab.jsonl BASE_FOLDER OTHER_FOLDER...

Rows whose result was wrong in any run are marked: their times mean nothing.
"""
import collections
import json
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, modes = sys.argv[1], sys.argv[2:]
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    wrong = set()
    order = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            workload = json.loads(line)
            name = workload["name"]
            if name not in order:
                order.append(name)
            times[name][workload["mode"]].append(workload["graph_us"])
            if not workload.get("passed", False):
                wrong.add(name)
    width = max([14] + [len(mode) + 2 for mode in modes])
    print("%-26s" % "workload" + "".join(mode.rjust(width) for mode in modes) +
          "".join(("vs " + mode).rjust(width + 3) for mode in modes[1:]) + "   runs")
    for name in order:
        means = [sum(times[name][mode]) / len(times[name][mode]) if times[name][mode] else float("nan") for mode in modes]
        changes = [("%+.2f%%" % (100 * (mean / means[0] - 1))).rjust(width + 3) for mean in means[1:]]
        runs = " | ".join(" ".join("%.1f" % t for t in times[name][mode]) for mode in modes)
        print("%-26s" % name + "".join(("%.1f" % mean).rjust(width) for mean in means) + "".join(changes) + "   " + runs +
              ("   WRONG RESULTS" if name in wrong else ""))

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarises the GPU times that the `level_timestamps` setting adds to the layer's statistics lines.

    level-times.py [--json] FILE.jsonl...

Each FILE is a `statistics_file` (one JSON line per completed graph dispatch). For each file and each graph pipeline in
it, prints the median over its dispatches of the whole dispatch, of its setup (begin transfers and entry pass), and of
each level with the part its level pass took (docs/debugging.md, "Where a dispatch's GPU time goes"). Lines without
times (statistics without level_timestamps) are skipped. With --json, one JSON object per file and pipeline instead.
"""
import json
import os
import statistics
import sys


def summarise(lines):
    """Median times per pipeline: {pipeline: {dispatches, gpu_us, setup_gpu_us, level_gpu_us, level_pass_gpu_us}}."""
    by_pipeline = {}
    for line in lines:
        if "gpu_us" not in line:
            continue
        by_pipeline.setdefault(line["pipeline"], []).append(line)
    summary = {}
    for pipeline, dispatches in by_pipeline.items():
        levels = min(len(d["level_gpu_us"]) for d in dispatches)
        summary[pipeline] = {
            "dispatches": len(dispatches),
            "gpu_us": statistics.median(d["gpu_us"] for d in dispatches),
            "setup_gpu_us": statistics.median(d["setup_gpu_us"] for d in dispatches),
            "level_gpu_us": [statistics.median(d["level_gpu_us"][i] for d in dispatches) for i in range(levels)],
            "level_pass_gpu_us": [statistics.median(d["level_pass_gpu_us"][i] for d in dispatches) for i in range(levels)],
        }
    return summary


def main(argv):
    as_json = "--json" in argv
    files = [a for a in argv if a != "--json"]
    if not files:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    for path in files:
        with open(path) as f:
            lines = [json.loads(text) for text in f if text.strip()]
        name = os.path.splitext(os.path.basename(path))[0]
        for pipeline, times in summarise(lines).items():
            if as_json:
                print(json.dumps({"file": name, "pipeline": pipeline, **times}))
                continue
            print(f"{name} ({pipeline}, median of {times['dispatches']} dispatches): {times['gpu_us']:.2f} us, "
                  f"setup {times['setup_gpu_us']:.2f}")
            for level, (total, level_pass) in enumerate(zip(times["level_gpu_us"], times["level_pass_gpu_us"])):
                print(f"  level {level:3d}: {total:10.2f} us  (level pass {level_pass:.2f}, nodes {total - level_pass:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

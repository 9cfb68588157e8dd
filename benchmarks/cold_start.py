#!/usr/bin/env python
"""What a first call costs: each embedded model and runtime in a fresh process, with its graph cache
empty (the first call after install: the plan's graph built, as ``pipeline("punct-case")`` builds it once a
machine) and filled (a warm process start), and the peak resident memory of each.

    python benchmarks/cold_start.py                                   # every embedded model, the plan's runtime
    python benchmarks/cold_start.py --models default --runtimes auto torch onnxruntime openvino --repeats 3

Each run is a fresh Python process that imports the plugin, loads the pipeline (``load_pipeline(model,
runtime=...)``; ``auto`` is the plan's choice on this machine) and restores a 40-word paragraph twice.
Reported, medians over ``--repeats`` runs: the process's whole wall time (interpreter start included),
the import, the load (the graph built where the cache is empty), the first call and the second, and the
peak resident memory (``ru_maxrss``). Cold runs use a new, empty ``HF_PUNCTCASE_CACHE`` each; warm runs
one that a run before them filled. Quote the CPU, its cores and the package versions with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PARAGRAPH = (
    "so what we found was that the older models kept failing on long transcripts and nobody could say why "
    "until we looked at the windows they were cut into and saw that every edge lost its context"
)

_CHILD = """
import json, resource, sys, time
start = time.perf_counter()
import hf_punctcase
imported = time.perf_counter()
pipe = hf_punctcase.load_pipeline(sys.argv[1], **({} if sys.argv[2] == "auto" else {"runtime": sys.argv[2]}))
loaded = time.perf_counter()
pipe(sys.argv[3])
first = time.perf_counter()
pipe(sys.argv[3])
second = time.perf_counter()
plan = pipe.execution_plan
print(json.dumps({
    "import": imported - start, "load": loaded - imported, "first_call": first - loaded, "second_call": second - first,
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "plan": f"{plan.runtime} {plan.precision}",
}))
"""


def run_once(model: str, runtime: str, cache: str) -> dict:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, model, runtime, PARAGRAPH], capture_output=True, text=True,
        env={**os.environ, "HF_PUNCTCASE_CACHE": cache, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{model} / {runtime} failed ({done.returncode}): {done.stderr[-800:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process"] = wall
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["default", "accurate", "on-device"])
    parser.add_argument("--runtimes", nargs="+", default=["auto"], choices=("auto", "torch", "onnxruntime", "openvino"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    import hf_punctcase

    rows = {}
    for model in args.models:
        for runtime in args.runtimes:
            if model == "on-device" and runtime not in ("auto", "onnxruntime"):
                continue  # an ONNX export runs on ONNX Runtime alone
            runs = {"cold": [], "warm": []}
            for _ in range(args.repeats):
                with tempfile.TemporaryDirectory() as cache:
                    runs["cold"].append(run_once(model, runtime, cache))
                    runs["warm"].append(run_once(model, runtime, cache))
            rows[f"{model} | {runtime}"] = {
                kind: {key: statistics.median(run[key] for run in found) for key in found[0] if key != "plan"} | {"plan": found[0]["plan"]}
                for kind, found in runs.items()
            }
    figures = {"machine": hf_punctcase.hardware.detect_hardware().describe(), "repeats": args.repeats, "rows": rows}
    print(json.dumps(figures, indent=2))
    print("\n| model | runtime (plan) | start | process | import | load | first call | second call | peak memory |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name, kinds in rows.items():
        for kind, row in kinds.items():
            model, runtime = name.split(" | ")
            print(
                f"| {model} | {runtime} ({row['plan']}) | {kind} | {row['process']:.1f} s | {row['import']:.1f} s | {row['load']:.1f} s "
                f"| {1000 * row['first_call']:.0f} ms | {1000 * row['second_call']:.0f} ms | {row['peak_rss_mib']:,.0f} MiB |"
            )
    if args.json:
        from hf_punctcase.atomic_files import atomic_write_text

        atomic_write_text(args.json, json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

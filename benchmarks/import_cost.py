#!/usr/bin/env python
"""What importing the plugin and starting the command line cost, against transformers' own floor.

    python benchmarks/import_cost.py                 # 5 interleaved rounds, medians
    python benchmarks/import_cost.py --repeats 9 --json out.json

Each round runs, in fresh processes and interleaved so that the machine's load falls on all alike:
``from transformers import Pipeline, PreTrainedModel`` (the floor: registering a pipeline task and a model
type needs both, and so torch), ``import hf_punctcase``, ``hf-punctcase restore --help``, and a warm
``hf-punctcase restore "…"`` (the embedded default, its graph already in the cache: run once before the
rounds). Reported: the median wall time of each, its ratio to the floor, and which of the heavy optional
packages (torchao, ONNX Runtime, OpenVINO, PEFT, datasets, evaluate, scikit-learn, accelerate) the
import and ``--help`` leave imported. Quote medians with the CPU, its cores and the package versions.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

#: Packages that neither the import nor ``--help`` should import (the first four are the plugin's).
HEAVY = ("torchao", "onnxruntime", "openvino", "peft", "datasets", "evaluate", "sklearn", "accelerate")

_REPORT = "import sys, json; print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)"

COMMANDS = {
    "floor": [sys.executable, "-c", "from transformers import Pipeline, PreTrainedModel; " + _REPORT.format(heavy=HEAVY)],
    "import hf_punctcase": [sys.executable, "-c", "import hf_punctcase; " + _REPORT.format(heavy=HEAVY)],
    "restore --help": [
        sys.executable, "-c",
        "import sys, atexit, json\n"
        f"atexit.register(lambda: print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr))\n"
        "from hf_punctcase.cli import main\nsys.argv = ['hf-punctcase', 'restore', '--help']\nmain()",
    ],
    "restore (warm)": [sys.executable, "-m", "hf_punctcase.cli", "restore", "so what are the risks i am not technical"],
}


def timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default: %(default)s)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    timed(COMMANDS["restore (warm)"])  # the graph built and cached before any round
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    imported: dict[str, str] = {}
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            elapsed, last_line = timed(command)
            times[name].append(elapsed)
            if name != "restore (warm)":
                imported[name] = last_line
    floor = statistics.median(times["floor"])
    figures = {
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "repeats": args.repeats,
        "rows": {
            name: {
                "median_s": round(statistics.median(values), 2),
                "ratio_to_floor": round(statistics.median(values) / floor, 2),
                "heavy_imported": json.loads(imported[name]) if name in imported else None,
            }
            for name, values in times.items()
        },
    }
    print(f"{'':<22} {'median s':>9} {'× floor':>8}  heavy packages imported")
    for name, row in figures["rows"].items():
        heavy = "—" if row["heavy_imported"] is None else (", ".join(row["heavy_imported"]) or "none")
        print(f"{name:<22} {row['median_s']:>9.2f} {row['ratio_to_floor']:>8.2f}  {heavy}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()

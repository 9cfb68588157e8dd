#!/usr/bin/env python
"""A markdown table of finetuning runs from their training_summary.json files, or of dev benchmarks.

    python benchmarks/ablation_table.py "6 layers=runs/ablations/swda_6l/final" "3 layers=runs/ablations/swda_3l/final"
    python benchmarks/ablation_table.py "default=default.json" "student=student.json"   # benchmarks/dev_eval.py --json

Each row: the dev figures that recipes/finetune.py measured through pipeline("punct-case") on its
dev corpora (punctuation overall F1, casing overall F1 where the corpus has casing), with the
training steps and wall time the run recorded. Given the JSON reports of benchmarks/dev_eval.py instead,
each row holds every dev set of the benchmark (punctuation and casing overall F1).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def row(label: str, folder: Path, dev_names: list[str]) -> str:
    summary = json.loads((folder / "training_summary.json").read_text())
    cells = [label]
    for name in dev_names:
        scores = summary["pipeline_dev"][name]
        cells.append(f"{100 * scores['punct_overall_f1']:.1f}")
        cells.append(f"{100 * scores['case_overall_f1']:.1f}" if "case_overall_f1" in scores else "–")
    cells += [str(summary["global_step"]), f"{summary['train_seconds'] / 60:.1f} min"]
    return "| " + " | ".join(cells) + " |"


def benchmark_table(runs: list[tuple[str, Path]]) -> list[str]:
    reports = [(label, json.loads(path.read_text())) for label, path in runs]
    dev_names = list(reports[0][1])
    header, columns = ["run"], []
    for name in dev_names:
        for task, what in (("punctuation", "punct. F1"), ("casing", "casing F1")):
            if task in reports[0][1][name]:
                header.append(f"{name} {what}")
                columns.append((name, task))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, report in reports:
        cells = [label] + [f"{100 * report[name][task]['overall_f1']:.1f}" for name, task in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "runs", nargs="+", help="LABEL=FOLDER (a final/ folder with training_summary.json) or LABEL=REPORT.json"
    )
    args = parser.parse_args()
    runs = [(label, Path(folder)) for label, _, folder in (r.partition("=") for r in args.runs)]
    if all(path.suffix == ".json" for _, path in runs):
        print("\n".join(benchmark_table(runs)))
        return
    first = json.loads((runs[0][1] / "training_summary.json").read_text())
    dev_names = list(first["pipeline_dev"])
    header = ["run"] + [f"{name} {what}" for name in dev_names for what in ("punct. F1", "casing F1")] + ["steps", "training time"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, folder in runs:
        print(row(label, folder, dev_names))


if __name__ == "__main__":
    main()

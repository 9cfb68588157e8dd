#!/usr/bin/env python
"""A training run's dev F1 curve as a Markdown table: each evaluation's step, words seen, hours (wall
clock and CPU core-hours, summed over every leg of a run stopped and resumed), the learning rate, the
training and dev losses, and the dev F1 of each task.

    python recipes/training_curve.py runs/cnn_bilstm/long            # a run folder: its newest checkpoint
    python recipes/training_curve.py runs/cnn_bilstm/long --json curve.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from hf_punctcase.atomic_files import atomic_output
from hf_punctcase.training.progress import curve_markdown, training_curve


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run folder (output_dir), a checkpoint folder or a final folder")
    parser.add_argument("--json", help="also write the curve as JSON to this file")
    args = parser.parse_args(argv)
    points = training_curve(args.run)
    if args.json:
        with atomic_output(args.json) as handle:
            json.dump([dataclasses.asdict(point) for point in points], handle, indent=2)
    table = curve_markdown(points)
    print(table)
    return table


if __name__ == "__main__":
    main()

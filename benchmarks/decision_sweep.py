#!/usr/bin/env python
"""Decision-time settings on a trained model, without retraining: are argmax decisions the best ones?

    python benchmarks/decision_sweep.py --model default --json sweep.json

One pass of the public pipeline over the reference dev sets of ``hf_punctcase.evaluation.DEV_SETS`` (the
aligned real-ASR set is left out: its labels only exist after alignment) records every word's
punctuation and casing probabilities (``return_probabilities=True``). Then, with no further model run:

- class biases: a log-probability offset per punctuation mark (COMMA, PERIOD, QUESTION; O stays 0),
  every combination of ``--bias-grid`` values, chosen on the first dev set (TED) and applied to all of
  them, which shows whether a threshold tuned on one set carries over; and the combination best on
  the mean of all sets, an upper bound of what one setting can give.

Figures are F1 differences (points) against each head's argmax. How marks and capitals are decided
together (the pipeline's ``consistent_casing``) is measured by benchmarks/consistency.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import DEV_SETS, available
from hf_punctcase.tasks import CASING, PUNCTUATION



def record_probabilities(restorer, references, batch_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per document: (punctuation probabilities, casing probabilities), one row per word."""
    results = restorer(
        [ref.words for ref in references], is_split_into_words=True, batch_size=batch_size, return_probabilities=True
    )
    recorded = [(r["probabilities"][PUNCTUATION.name], r["probabilities"][CASING.name]) for r in results]
    for (punct, _), ref in zip(recorded, references):
        if len(punct) != len(ref.words):
            raise RuntimeError(f"{len(punct)} predictions for {len(ref.words)} reference words")
    return recorded


def micro_f1(gold: np.ndarray, predicted: np.ndarray, negative: int = 0) -> float:
    """Micro F1 over the classes other than ``negative`` (as the punct_case metric scores labels)."""
    hits = ((gold == predicted) & (gold != negative)).sum()
    return 100.0 * 2 * hits / max(1, (predicted != negative).sum() + (gold != negative).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--bias-grid", type=float, nargs="+", default=[-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    )
    parser.add_argument("--json", default=None, help="write every figure here")
    args = parser.parse_args()

    restorer = load_restorer(args)
    scheme = restorer.scheme
    root = data_dir(args.data_dir)

    sets = {}
    for dev_set in DEV_SETS:
        if not available(dev_set, root):
            print(f"{dev_set.name}: files absent under {root}, skipped", flush=True)
            continue
        references = dev_set.load(root, scheme)
        probabilities = record_probabilities(restorer, references, args.batch_size)
        gold_punct = np.array(
            [scheme.punct_labels.index(label) if label is not None else -1 for ref in references for label in ref.punct],
            dtype=np.int64,
        )
        known = gold_punct >= 0  # a reference label of None (one a source could not give) is left out
        log_punct = np.log(np.concatenate([punct for punct, _ in probabilities]) + 1e-9)
        sets[dev_set.name] = {"gold_punct": gold_punct[known], "log_punct": log_punct[known], "words": len(gold_punct)}
        print(f"{dev_set.name}: {len(gold_punct):,} words", flush=True)

    report = {"model": args.model, "dtype": args.dtype, "sets": {}}
    base = {name: micro_f1(s["gold_punct"], s["log_punct"].argmax(-1)) for name, s in sets.items()}
    grid = {}
    for offsets in itertools.product(args.bias_grid, repeat=len(scheme.punct_labels) - 1):
        bias = np.array([0.0, *offsets])
        grid[offsets] = {
            name: micro_f1(s["gold_punct"], (s["log_punct"] + bias).argmax(-1)) for name, s in sets.items()
        }
    first = next(iter(sets))
    tuned_first = max(grid, key=lambda offsets: grid[offsets][first])
    tuned_mean = max(grid, key=lambda offsets: np.mean(list(grid[offsets].values())))
    for name, s in sets.items():
        report["sets"][name] = {
            "words": s["words"],
            "punct_f1": base[name],
            "bias_tuned_on_first": grid[tuned_first][name] - base[name],
            "bias_tuned_on_mean": grid[tuned_mean][name] - base[name],
        }
    labels = scheme.punct_labels[1:]
    report["bias_tuned_on_first"] = dict(zip(labels, tuned_first))
    report["bias_tuned_on_mean"] = dict(zip(labels, tuned_mean))

    def describe(offsets: tuple[float, ...]) -> str:
        return ", ".join(f"{label} {value:+.2f}" for label, value in zip(labels, offsets))

    print(f"\nbias tuned on {first}: {describe(tuned_first)}; tuned on the mean: {describe(tuned_mean)}\n")
    print(f"| dev set | words | punct. F1 (argmax) | bias tuned on {first} | bias tuned on the mean |")
    print("|---|---|---|---|---|")
    for name, row in report["sets"].items():
        print(
            f"| {name} | {row['words']:,} | {row['punct_f1']:.1f} | {row['bias_tuned_on_first']:+.2f} "
            f"| {row['bias_tuned_on_mean']:+.2f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

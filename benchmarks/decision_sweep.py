#!/usr/bin/env python
"""Decision-time levers on a trained model, without retraining: are argmax decisions the best ones?

    python benchmarks/decision_sweep.py --model default --json sweep.json

One pass of the public pipeline over the reference dev sets of benchmarks/evaluate.py (the aligned
real-ASR set is left out: its labels only exist after alignment) records every word's punctuation and
casing probabilities. Then, with no further model run:

- class biases: a log-probability offset per punctuation mark (COMMA, PERIOD, QUESTION; O stays 0),
  every combination of ``--bias-grid`` values, chosen on the first dev set (TED) and applied to all of
  them, which shows whether a threshold tuned on one set carries over; and the combination best on
  the mean of all sets, an upper bound of what one setting can give;
- the sentence-start rule: a word the model cases LOWER after a predicted PERIOD or QUESTION (or
  first in its document) becomes UPPER_FIRST, as the punctuation it follows implies.

Figures are F1 differences (points) against the pipeline's own argmax decisions.
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's folder comes first on sys.path: evaluate.py would shadow `evaluate`.
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.path.dirname(os.path.abspath(__file__))]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import hf_punctcase  # noqa: E402
from hf_punctcase.data import data_dir  # noqa: E402
from hf_punctcase.pipelines.punct_case import _unbatched  # noqa: E402  (the stacking postprocess itself does)


def _evaluate_script():
    spec = importlib.util.spec_from_file_location("evaluate_script", Path(__file__).with_name("evaluate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record_probabilities(restorer, references, batch_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per document: (punctuation probabilities, casing probabilities), one row per word."""
    recorded = []
    postprocess = restorer.postprocess

    def recording(model_outputs, **kwargs):
        result = postprocess(model_outputs, **kwargs)
        words = len(result["words"])
        stacked = [np.concatenate([_unbatched(o[key]) for o in model_outputs])[:words] for key in ("punct_probs", "case_probs")]
        recorded.append(tuple(stacked))
        return result

    restorer.postprocess = recording
    try:
        restorer([" ".join(ref.words) for ref in references], batch_size=batch_size)
    finally:
        del restorer.postprocess
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
    parser.add_argument("--model", default="default", help="checkpoint folder, or 'default' for the embedded model")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--bias-grid", type=float, nargs="+", default=[-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--json", default=None, help="write every figure here")
    args = parser.parse_args()

    restorer = hf_punctcase.load_pipeline(None if args.model == "default" else args.model)
    scheme = restorer.scheme
    sentence_end = [scheme.punct_labels.index(label) for label in ("PERIOD", "QUESTION") if label in scheme.punct_labels]
    lower, upper_first = scheme.case_labels.index("LOWER"), scheme.case_labels.index("UPPER_FIRST")

    sets = {}
    for name, (references, has_casing) in _evaluate_script().dev_sets(data_dir(args.data_dir), scheme).items():
        probabilities = record_probabilities(restorer, references, args.batch_size)
        gold_punct = np.concatenate([[scheme.punct_labels.index(label) for label in ref.punct] for ref in references])
        log_punct = np.log(np.concatenate([punct for punct, _ in probabilities]) + 1e-9)
        entry = {"gold_punct": gold_punct, "log_punct": log_punct, "words": len(gold_punct)}
        if has_casing:
            entry["gold_case"] = np.concatenate([[scheme.case_labels.index(label) for label in ref.case] for ref in references])
            entry["case"] = [(punct.argmax(-1), case.argmax(-1)) for punct, case in probabilities]
        sets[name] = entry
        print(f"{name}: {entry['words']:,} words", flush=True)

    report = {"model": args.model, "sets": {}}
    base = {name: micro_f1(s["gold_punct"], s["log_punct"].argmax(-1)) for name, s in sets.items()}
    grid = {}
    for offsets in itertools.product(args.bias_grid, repeat=len(scheme.punct_labels) - 1):
        bias = np.array([0.0, *offsets])
        grid[offsets] = {name: micro_f1(s["gold_punct"], (s["log_punct"] + bias).argmax(-1)) for name, s in sets.items()}
    first = next(iter(sets))
    tuned_first = max(grid, key=lambda offsets: grid[offsets][first])
    tuned_mean = max(grid, key=lambda offsets: np.mean(list(grid[offsets].values())))
    for name, s in sets.items():
        row = {
            "words": s["words"],
            "punct_f1": base[name],
            "bias_tuned_on_first": grid[tuned_first][name] - base[name],
            "bias_tuned_on_mean": grid[tuned_mean][name] - base[name],
        }
        if "case" in s:
            argmax_case, ruled_case = [], []
            for punct_ids, case_ids in s["case"]:
                follows_end = np.concatenate([[True], np.isin(punct_ids[:-1], sentence_end)])
                argmax_case.append(case_ids)
                ruled_case.append(np.where(follows_end & (case_ids == lower), upper_first, case_ids))
            case_f1 = micro_f1(s["gold_case"], np.concatenate(argmax_case), negative=lower)
            row["case_f1"] = case_f1
            row["sentence_start_rule"] = micro_f1(s["gold_case"], np.concatenate(ruled_case), negative=lower) - case_f1
        report["sets"][name] = row
    labels = scheme.punct_labels[1:]
    report["bias_tuned_on_first"] = dict(zip(labels, tuned_first))
    report["bias_tuned_on_mean"] = dict(zip(labels, tuned_mean))

    def describe(offsets: tuple[float, ...]) -> str:
        return ", ".join(f"{label} {value:+.2f}" for label, value in zip(labels, offsets))

    print(f"\nbias tuned on {first}: {describe(tuned_first)}; tuned on the mean: {describe(tuned_mean)}\n")
    print("| dev set | words | punct. F1 | bias tuned on TED | bias tuned on the mean | casing F1 | sentence-start rule |")
    print("|---|---|---|---|---|---|---|")
    for name, row in report["sets"].items():
        casing = f"{row['case_f1']:.1f} | {row['sentence_start_rule']:+.2f}" if "case_f1" in row else "– | –"
        print(
            f"| {name} | {row['words']:,} | {row['punct_f1']:.1f} | {row['bias_tuned_on_first']:+.2f} "
            f"| {row['bias_tuned_on_mean']:+.2f} | {casing} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

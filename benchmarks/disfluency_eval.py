#!/usr/bin/env python
"""Disfluency benchmark: a model with the disfluency head on the Switchboard calls with Meteer markup
(its validation and held-out test calls), through the public pipeline, one call per input.

    python benchmarks/disfluency_eval.py --model runs/disfluency/swbd_none/final
    python benchmarks/disfluency_eval.py --model CKPT --splits test --swda --json out.json

For each split: disfluency precision, recall and F1 of DISFLUENT (fillers, discourse markers, edit
terms and reparanda as annotated), the share of "um"/"uh" marked disfluent (filler recall), the share
of fluent words kept (fluent retention), and the punctuation and casing F1 on the same words. With
``--swda``: on SwDA's validation conversations (real telephone speech whose markup is gone but whose
fillers are written), the share of "um"/"uh" that ``remove_disfluencies=True`` removes and the share of
other words it keeps (a lower bound: reparanda there are not annotated and count as kept words).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir, load_punct_case_dataset
from hf_punctcase.data.sources import read_swda
from hf_punctcase.evaluation import FILLER_WORDS, disfluency_table, evaluate_disfluency
from hf_punctcase.labels import LabelScheme


def swda_removal(restorer, root, batch_size: int) -> dict[str, float]:
    """Filler removal and word retention of ``remove_disfluencies=True`` on SwDA's validation
    conversations, fed as lowercased words without marks."""
    scheme = LabelScheme()
    documents = [scheme.parse(text).words for _, text in read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", split="val")]
    results = restorer([" ".join(words) for words in documents], batch_size=batch_size, remove_disfluencies=True)
    fillers, others = [], []
    for words, result in zip(documents, results):
        for word, entry in zip(words, result["words"]):
            (fillers if word in FILLER_WORDS else others).append(entry["removed"])
    return {
        "swda_val_words": sum(len(words) for words in documents),
        "swda_filler_removal": float(np.mean(fillers)),
        "swda_fillers": len(fillers),
        "swda_other_words_kept": 1.0 - float(np.mean(others)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--splits", nargs="+", default=["validation", "test"], choices=["train", "validation", "test"])
    parser.add_argument("--swda", action="store_true", help="also filler removal on SwDA's validation conversations")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    root = data_dir(args.data_dir)
    restorer = load_restorer(args)
    calls = load_punct_case_dataset("switchboard_disfluency", root, max_words=10_000, splits=args.splits)
    figures: dict[str, dict] = {}
    for split in args.splits:
        figures[split] = evaluate_disfluency(restorer, calls[split], batch_size=args.batch_size)
    print(f"model {args.model}: {restorer.execution_plan.describe()}\n")
    print(disfluency_table(figures))
    if args.swda:
        figures["swda"] = swda_removal(restorer, root, args.batch_size)
        swda = figures["swda"]
        print(
            f"\nSwDA val ({swda['swda_val_words']:,} words), remove_disfluencies=True: {100 * swda['swda_filler_removal']:.1f}% "
            f"of {swda['swda_fillers']:,} um/uh removed, {100 * swda['swda_other_words_kept']:.1f}% of the other words kept"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()

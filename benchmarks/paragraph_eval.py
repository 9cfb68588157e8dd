#!/usr/bin/env python
"""Paragraph benchmark: ``paragraphs=True`` through the public pipeline on held-out TED talks, against a
length-only baseline.

    python benchmarks/paragraph_eval.py --model runs/default_dictation_head/final --talks 40

The talks are the TED corpus's held-out talks (its ``test`` split, never trained on), whose transcribers'
line breaks are the reference paragraphs. Each talk goes in as its words, lowercased and unpunctuated,
as one input. A paragraph end is scored where it falls: the last word of a paragraph, the talk's own
end left out. The baseline breaks after every k-th reference sentence, with the k that scores best on
these same talks (a baseline given the reference sentences and its best k, so stronger than one a
user could run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import hf_punctcase
from hf_punctcase.data.sources import data_dir, read_ted_talks
from hf_punctcase.data.splits import document_split
from hf_punctcase.labels import SENTENCE_END_LABELS, LabelScheme


def held_out_talks(root: Path, count: int) -> list[tuple[str, str]]:
    talks = [
        (doc_id, text) for doc_id, text in read_ted_talks(root / "ted" / "talks.jsonl")
        if "\n" in text and document_split(doc_id, validation=0.0, test=0.05) == "test"
    ]
    return talks[:count]


def reference(text: str, scheme: LabelScheme) -> tuple[list[str], set[int], list[int]]:
    """A talk's words, the indices of its paragraphs' last words (not its own end) and of its sentences' last words."""
    words, ends, sentence_ends = [], set(), []
    for line in text.split("\n"):
        labeled = scheme.parse(line)
        if not labeled.words:
            continue
        sentence_ends += [len(words) + i for i, punct in enumerate(labeled.punct) if punct in SENTENCE_END_LABELS]
        words += labeled.words
        ends.add(len(words) - 1)
    ends.discard(len(words) - 1)
    return words, ends, sentence_ends


def f1(predicted: set[int], gold: set[int]) -> dict:
    hits = len(predicted & gold)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def pooled(pairs: list[tuple[set[int], set[int]]]) -> dict:
    predicted = {(n, i) for n, (p, _) in enumerate(pairs) for i in p}
    gold = {(n, i) for n, (_, g) in enumerate(pairs) for i in g}
    return f1(predicted, gold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a checkpoint with a paragraph head")
    parser.add_argument("--talks", type=int, default=40)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    scheme = LabelScheme()
    talks = [reference(text, scheme) for _, text in held_out_talks(data_dir(args.data_dir), args.talks)]
    pipe = hf_punctcase.load_pipeline(args.model)
    model_pairs = []
    for words, gold, _ in talks:
        result = pipe(" ".join(words), paragraphs=True)
        predicted = {paragraph["last_word"] for paragraph in result["paragraphs"][:-1]}
        model_pairs.append((predicted, gold))
    baselines = {}
    for k in range(1, 16):
        pairs = [({s for n, s in enumerate(sentence_ends, 1) if n % k == 0 and s != len(words) - 1}, gold)
                 for words, gold, sentence_ends in talks]
        baselines[k] = pooled(pairs)
    best_k = max(baselines, key=lambda k: baselines[k]["f1"])
    scores = {
        "model": args.model,
        "talks": len(talks),
        "words": sum(len(words) for words, _, _ in talks),
        "reference_paragraph_ends": sum(len(gold) for _, gold, _ in talks),
        "model_boundaries": pooled(model_pairs),
        "baseline_every_k_sentences": {"k": best_k, **baselines[best_k]},
    }
    text = json.dumps(scores, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

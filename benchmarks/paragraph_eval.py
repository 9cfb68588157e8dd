#!/usr/bin/env python
"""Paragraph benchmark: ``paragraphs=True`` through the public pipeline on held-out TED talks, against a
length-only baseline.

    python benchmarks/paragraph_eval.py --model runs/default_dictation_head/final --talks 40
    python benchmarks/paragraph_eval.py --model MODEL --talks 40 --tune-talks 40 --write-threshold

The talks are the TED corpus's held-out talks (its ``test`` split, never trained on), whose transcribers'
line breaks are the reference paragraphs. Each talk goes in as its words, lowercased and unpunctuated,
as one input. A paragraph end is scored where it falls: the last word of a paragraph, the talk's own
end left out. The baseline breaks after every k-th reference sentence, with the k that scores best on
these same talks (a baseline given the reference sentences and its best k, so stronger than one a
user could run).

A paragraph end is rare (one word in about 150), so the head gives few of them a probability over
0.5. ``--tune-talks N`` takes the next N held-out talks, apart from the scored ones, and chooses there
the decision threshold with the best boundary F1; the scored talks are then scored at it too.
``--write-threshold`` writes it into the model's config.json (``paragraph_threshold``), where the
pipeline and the torch-free runtime read it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import hf_punctcase
from hf_punctcase.execution import RUNTIMES
from hf_punctcase.atomic_files import atomic_write_text
from hf_punctcase.data.sources import data_dir, read_ted_talks
from hf_punctcase.data.splits import document_split
from hf_punctcase.labels import SENTENCE_END_LABELS, LabelScheme
from hf_punctcase.restoration.layout import paragraph_ends
from hf_punctcase.options import PARAGRAPH


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


def restored_ends(words: list[dict], threshold: float) -> set[int]:
    """The paragraph ends ``paragraphs=True`` gives at ``threshold`` from one restoration's words
    (:func:`hf_punctcase.restoration.layout.paragraph_ends` of the words decided at it; the text's own end left out)."""
    decided = [{**entry, "paragraph_end": entry["paragraph_end_score"] > threshold} for entry in words]
    return set(paragraph_ends(decided)[:-1])


def best_threshold(restored: list[tuple[list[dict], set[int]]]) -> tuple[float, dict]:
    """The threshold (0.05 to 0.95 by 0.01) with the best pooled boundary F1 on restored talks."""
    scored = {
        round(t, 2): pooled([(restored_ends(words, t), gold) for words, gold in restored]) for t in np.arange(0.05, 0.951, 0.01)
    }
    threshold = max(scored, key=lambda t: scored[t]["f1"])
    return threshold, scored[threshold]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a checkpoint with a paragraph head")
    parser.add_argument("--talks", type=int, default=40)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--tune-talks", type=int, default=0, help="choose the threshold on this many further talks")
    parser.add_argument("--write-threshold", action="store_true", help="write the chosen threshold into the model's config.json")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--runtime", default="auto", choices=("auto", *RUNTIMES),
        help="what runs the model (auto: as pipeline('punct-case') plans it on this machine)",
    )
    args = parser.parse_args(argv)
    if args.write_threshold and not args.tune_talks:
        parser.error("--write-threshold needs --tune-talks")
    scheme = LabelScheme()
    held_out = [reference(text, scheme) for _, text in held_out_talks(data_dir(args.data_dir), args.talks + args.tune_talks)]
    talks, tuning = held_out[: args.talks], held_out[args.talks :]
    pipe = hf_punctcase.load_pipeline(args.model, runtime=args.runtime)
    own = PARAGRAPH.threshold_in(pipe.model.config)
    model_pairs, restored = [], []
    for words, gold, _ in talks:
        result = pipe(" ".join(words), paragraphs=True)
        predicted = {paragraph["last_word"] for paragraph in result["paragraphs"][:-1]}
        if predicted != restored_ends(result["words"], own):
            raise RuntimeError("internal error: paragraphs=True and the words' scores disagree")
        model_pairs.append((predicted, gold))
        restored.append((result["words"], gold))
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
        "model_boundaries": {"threshold": own, **pooled(model_pairs)},
        "baseline_every_k_sentences": {"k": best_k, **baselines[best_k]},
    }
    if tuning:
        tuned = [(pipe(" ".join(words))["words"], gold) for words, gold, _ in tuning]
        threshold, on_tuning = best_threshold(tuned)
        scores["tuned_threshold"] = {
            "threshold": threshold,
            "tuning_talks": len(tuning),
            "on_tuning_talks": on_tuning,
            "model_boundaries": pooled([(restored_ends(words, threshold), gold) for words, gold in restored]),
        }
        if args.write_threshold:
            config_file = Path(args.model) / "config.json"
            config = json.loads(config_file.read_text(encoding="utf-8"))
            config[PARAGRAPH.threshold_field] = threshold
            atomic_write_text(config_file, json.dumps(config, indent=2, sort_keys=True) + "\n")
    text = json.dumps(scores, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Consistency of the restored text: do sentence ends and capitals agree, and at what F1?

    python benchmarks/consistency.py --json consistency.json
    python benchmarks/consistency.py --model runs/x/final --dtype float32 --name-odds 1 2 4 8

One pass of the public pipeline over every dev set (hf_punctcase.evaluation.dev_sets, the aligned
real-ASR set included) records each word's punctuation and casing probabilities
(``return_probabilities=True``); every decoding rule below is then applied to the same probabilities
with ``hf_punctcase.restoration`` (no further model run):

- ``argmax``: each head's argmax (``consistent_casing=False``);
- ``capital after end``: argmax, then a LOWER word after a predicted sentence end becomes UPPER_FIRST;
- ``joint, name odds k``: :func:`hf_punctcase.restoration.consistent_labels`, the mark after word
  i - 1 and the casing of word i decided together; a capital inside a sentence needs odds k over
  LOWER from the casing head (k = 1: only "sentence end, then lowercase" is excluded). The pipeline's
  ``consistent_casing=True`` is this rule at ``restoration.NAME_ODDS`` (checked here against
  ``restoration.decode``).

Figures per dev set and rule:

- ends → capital: the share of predicted sentence ends (PERIOD, QUESTION) followed by a capitalised
  word (casing other than LOWER), among ends followed by a word that has a letter to capitalise;
- initial-only capitals: words written UPPER_FIRST after a comma or no mark whose type occurs at
  least ``--min-count`` (20) times in the references of the cased dev sets (TED, SwDA, MTS-Dialog) and
  is never capitalised there inside a sentence: a capital that only a sentence start explains
  ("Hello, How are you?"); all capitals after a comma or no mark (names, "I", ...) in brackets;
- punctuation and casing overall F1 (hf_punctcase.evaluation.scoring), and the change against argmax
  with a 95% paired bootstrap interval (resampling blocks of ``--block-words`` words, 1,000 draws).
  For the aligned real-ASR set punctuation F1 comes from aligning the ASR words with the human
  transcript (the punct_case metric), without an interval.
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import ASR_DEV_SETS, DEV_SETS, available, score_labels
from hf_punctcase.labels import LabelScheme
from hf_punctcase.metrics import PunctCase
from hf_punctcase.restoration import (
    NAME_ODDS,
    SENTENCE_END_LABELS,
    capitalisable,
    consistent_labels,
    decode,
    is_opaque,
)
from hf_punctcase.inputs import split_words
from hf_punctcase.tasks import CASING, PUNCTUATION

FREE_START = ", first word argmax"
ENDS_AT_ONE = "marks at odds 1, capitals inside at odds"


class Document:
    """One input: its words, the recorded probabilities and, for reference sets, the reference labels."""

    def __init__(self, words: list[str], probs: dict[str, np.ndarray], reference=None):
        self.words = words
        self.probs = probs
        self.reference = reference
        self.opaque = [is_opaque(word) for word in words]
        self.capitalisable = capitalisable(words, self.opaque)


def record(restorer, inputs: Sequence[list[str]], batch_size: int) -> list[dict[str, np.ndarray]]:
    results = restorer(list(inputs), is_split_into_words=True, batch_size=batch_size, return_probabilities=True)
    return [result["probabilities"] for result in results]


def initial_only_types(references, min_count: int) -> set[str]:
    """Word types seen at least ``min_count`` times in cased references and never capitalised there
    inside a sentence (after a comma or no mark): "there", "could", "all" — words whose capital only a
    sentence start explains. Rarer types are left out: a name the references only happen to write at
    sentence starts would count as one."""
    seen, inside = Counter(), set()
    for ref in references:
        for j, word in enumerate(ref.words):
            seen[word] += 1
            if j and ref.case[j] not in ("LOWER", None) and ref.punct[j - 1] not in SENTENCE_END_LABELS:
                inside.add(word)
    return {word for word, count in seen.items() if count >= min_count} - inside


def labels_for(rule: str, doc: Document, scheme: LabelScheme) -> tuple[np.ndarray, np.ndarray]:
    punct, case = doc.probs[PUNCTUATION.name], doc.probs[CASING.name]
    fixed = ["O" if dark else None for dark in doc.opaque]
    if rule == "argmax" or rule == "capital after end":
        punct_ids, case_ids = punct.argmax(-1).copy(), case.argmax(-1).copy()
        for i, dark in enumerate(doc.opaque):
            if dark:
                punct_ids[i], case_ids[i] = 0, 0
        if rule == "capital after end":
            end_ids = [scheme.punct_labels.index(label) for label in SENTENCE_END_LABELS if label in scheme.punct_labels]
            lowercase = case_ids == scheme.case_labels.index("LOWER")
            follows = np.concatenate([[True], np.isin(punct_ids[:-1], end_ids)]) & doc.capitalisable & lowercase
            case_ids[follows] = scheme.case_labels.index("UPPER_FIRST")
        return punct_ids, case_ids
    free_start = rule.endswith(FREE_START)
    odds = float(rule.removesuffix(FREE_START).rsplit(" ", 1)[-1])
    if rule.startswith(ENDS_AT_ONE):  # the marks of the joint rule at odds 1; the odds only lower capitals
        marks, _ = consistent_labels(punct, case, scheme, doc.capitalisable, fixed, name_odds=1.0)
        fixed = [scheme.punct_labels[i] for i in marks]
    punct_ids, case_ids = consistent_labels(
        punct, case, scheme, doc.capitalisable, fixed, name_odds=odds, first_starts_sentence=not free_start
    )
    for i, dark in enumerate(doc.opaque):
        if dark:
            case_ids[i] = 0
    return punct_ids, case_ids


def consistency(docs: Sequence[Document], labels, scheme: LabelScheme, initial_only: set[str]) -> dict:
    end_ids = [scheme.punct_labels.index(l) for l in SENTENCE_END_LABELS if l in scheme.punct_labels]
    lower, upper_first = scheme.case_labels.index("LOWER"), scheme.case_labels.index("UPPER_FIRST")
    ends = capital_after_end = caps_inside = initial_caps = 0
    for doc, (punct_ids, case_ids) in zip(docs, labels):
        after_end = np.isin(punct_ids[:-1], end_ids) & doc.capitalisable[1:]
        ends += int(after_end.sum())
        capital_after_end += int((after_end & (case_ids[1:] != lower)).sum())
        inside = ~np.isin(punct_ids[:-1], end_ids) & doc.capitalisable[1:] & (case_ids[1:] == upper_first)
        caps_inside += int(inside.sum())
        initial_caps += sum(1 for j in np.flatnonzero(inside) if doc.words[j + 1].lower() in initial_only)
    return {
        "sentence_ends": ends,
        "lowercase_after_end": ends - capital_after_end,
        "end_then_capital_rate": capital_after_end / max(1, ends),
        "capitals_after_comma_or_none": caps_inside,
        "initial_only_capitals": initial_caps,
    }


def block_counts(gold: np.ndarray, pred: np.ndarray, negative: int, block: int) -> np.ndarray:
    """Per block of words: (hits, predicted, gold) of the micro F1 over classes other than ``negative``."""
    starts = np.arange(0, len(gold), block)
    hits = np.add.reduceat(((gold == pred) & (gold != negative)).astype(np.int64), starts)
    predicted = np.add.reduceat((pred != negative).astype(np.int64), starts)
    wanted = np.add.reduceat((gold != negative).astype(np.int64), starts)
    return np.stack([hits, predicted, wanted], axis=1)


def bootstrap_delta(
    base: np.ndarray, other: np.ndarray, rng: np.random.Generator, draws: int = 1000
) -> tuple[float, float]:
    """95% interval of the F1 change (points) between two labellings, resampling the same blocks."""
    picks = rng.integers(0, len(base), size=(draws, len(base)))

    def f1(counts):
        summed = counts[picks].sum(1)
        return 200.0 * summed[:, 0] / np.maximum(1, summed[:, 1] + summed[:, 2])

    low, high = np.percentile(f1(other) - f1(base), [2.5, 97.5])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--name-odds", type=float, nargs="+", default=[1.0, 1.5, 2.0, 3.0, 4.0, 8.0])
    parser.add_argument("--min-count", type=int, default=20,
                        help="occurrences in the cased references for a type to count as sentence-initial-only")
    parser.add_argument("--block-words", type=int, default=250, help="bootstrap block size")
    parser.add_argument("--cache", default=None,
                        help="a file of the recorded probabilities: written on the first run, read on the next ones")
    parser.add_argument("--json", default=None, help="write every figure here")
    args = parser.parse_args()

    restorer = load_restorer(args)
    scheme, lexicon = restorer.scheme, restorer.lexicon
    root = data_dir(args.data_dir)
    rules = ["argmax", "capital after end"] + [f"joint, name odds {k:g}" for k in args.name_odds]
    rules.append(f"joint, name odds {NAME_ODDS:g}{FREE_START}")
    rules += [f"{ENDS_AT_ONE} {k:g}" for k in args.name_odds if k != 1]

    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        recorded = pickle.loads(cache.read_bytes())
        if recorded["model"] != args.model or recorded["dtype"] != args.dtype:
            raise SystemExit(f"{cache} holds the probabilities of {recorded['model']} ({recorded['dtype']})")
        probabilities = recorded["sets"]
    else:
        probabilities = {}

    def record_once(name: str, inputs) -> list[dict[str, np.ndarray]]:
        if name not in probabilities:
            probabilities[name] = record(restorer, inputs, args.batch_size)
        return probabilities[name]

    sets: dict[str, tuple[list[Document], bool, bool]] = {}  # name → (documents, has casing, aligned)
    cased_references = []
    for dev_set in DEV_SETS:
        if not available(dev_set, root):
            print(f"{dev_set.name}: files absent, skipped", flush=True)
            continue
        references = dev_set.load(root, scheme)
        probs = record_once(dev_set.name, [ref.words for ref in references])
        sets[dev_set.name] = ([Document(r.words, p, r) for r, p in zip(references, probs)], dev_set.has_casing, False)
        if dev_set.has_casing:
            cased_references += references
        print(f"{dev_set.name}: {sum(len(r) for r in references):,} words", flush=True)
    for asr_set in ASR_DEV_SETS:
        if not available(asr_set, root):
            print(f"{asr_set.name}: files absent, skipped", flush=True)
            continue
        pairs = asr_set.load(root, scheme)
        probs = record_once(asr_set.name, [words for words, _ in pairs])
        sets[asr_set.name] = ([Document(w, p, r) for (w, r), p in zip(pairs, probs)], False, True)
        print(f"{asr_set.name}: {sum(len(w) for w, _ in pairs):,} ASR words", flush=True)
    if cache is not None and not cache.exists():
        cache.write_bytes(pickle.dumps({"model": args.model, "dtype": args.dtype, "sets": probabilities}))
    initial_only = initial_only_types(cased_references, args.min_count)

    rng = np.random.default_rng(0)
    report = {"model": args.model, "dtype": args.dtype, "torch": torch.__version__, "sets": {}}
    for name, (docs, has_casing, aligned) in sets.items():
        per_rule = {rule: [labels_for(rule, doc, scheme) for doc in docs] for rule in rules}
        # The pipeline's own decoding is the joint rule at NAME_ODDS.
        default_rule = f"joint, name odds {NAME_ODDS:g}"
        if default_rule in per_rule:
            for doc, (punct_ids, case_ids) in zip(docs, per_rule[default_rule]):
                decoded = decode(split_words(doc.words), doc.probs, scheme, lexicon, consistent_casing=True)["words"]
                assert [w["punctuation"] for w in decoded] == [scheme.punct_labels[i] for i in punct_ids]
                assert [w["casing"] for w in decoded] == [scheme.case_labels[i] for i in case_ids]
        entry = {}
        for rule, labels in per_rule.items():
            row = consistency(docs, labels, scheme, initial_only)
            if aligned:
                scores = PunctCase().compute(
                    predictions=[[scheme.punct_labels[i] for i in p] for p, _ in labels],
                    references=[doc.reference.punct for doc in docs],
                    prediction_words=[doc.words for doc in docs],
                    reference_words=[doc.reference.words for doc in docs],
                )
                row["punct_f1"] = 100 * scores["overall_f1"]
            else:
                gold_p = [l for doc in docs for l in doc.reference.punct]
                pred_p = [scheme.punct_labels[i] for p, _ in labels for i in p]
                gold_c = [l for doc in docs for l in doc.reference.case] if has_casing else None
                pred_c = [scheme.case_labels[i] for _, c in labels for i in c] if has_casing else None
                scores = score_labels(scheme, gold_p, pred_p, gold_c, pred_c)
                row["punct_f1"] = 100 * scores["punct_overall_f1"]
                if has_casing:
                    row["case_f1"] = 100 * scores["case_overall_f1"]
            entry[rule] = row
        if not aligned:  # paired bootstrap of the F1 change against argmax
            gold_p = np.array([scheme.punct_labels.index(l) for doc in docs for l in doc.reference.punct])
            tasks = [("punct", gold_p, 0, 0)]
            if has_casing:
                gold_c = np.array([scheme.case_labels.index(l) for doc in docs for l in doc.reference.case])
                tasks.append(("case", gold_c, 1, scheme.case_labels.index("LOWER")))
            for task, gold, column, negative in tasks:
                argmax = np.concatenate([labels[column] for labels in per_rule["argmax"]])
                base = block_counts(gold, argmax, negative, args.block_words)
                for rule in rules[1:]:
                    pred = np.concatenate([l[column] for l in per_rule[rule]])
                    entry[rule][f"{task}_delta_95"] = bootstrap_delta(
                        base, block_counts(gold, pred, negative, args.block_words), rng
                    )
        report["sets"][name] = entry

    print(markdown(report, rules))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


def markdown(report: dict, rules: list[str]) -> str:
    lines = [
        "| dev set | rule | ends → capital | lowercase after end "
        "| initial-only capitals (all capitals) after , / none "
        "| punct. F1 (Δ, 95% interval) | casing F1 (Δ, 95% interval) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in report["sets"].items():
        base = entry["argmax"]
        for rule in rules:
            row = entry[rule]
            cells = [name, rule, f"{100 * row['end_then_capital_rate']:.1f}% of {row['sentence_ends']:,}",
                     f"{row['lowercase_after_end']:,}",
                     f"{row['initial_only_capitals']:,} ({row['capitals_after_comma_or_none']:,})"]
            for task in ("punct", "case"):
                if f"{task}_f1" not in row:
                    cells.append("–")
                    continue
                text = f"{row[f'{task}_f1']:.2f}"
                if rule != "argmax":
                    text += f" ({row[f'{task}_f1'] - base[f'{task}_f1']:+.2f}"
                    if f"{task}_delta_95" in row:
                        low, high = row[f"{task}_delta_95"]
                        text += f", {low:+.2f} … {high:+.2f}"
                    text += ")"
                cells.append(text)
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

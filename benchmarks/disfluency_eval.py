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

``--core``: what ``remove_disfluencies=True`` keeps of what a reader needs, on real conversation (SwDA's
validation conversations, ACI-BENCH's validation doctor–patient dialogues, the Switchboard calls of the
splits): the share of *core words* kept — words that are no filler, no discourse marker and not said
again within the next three words (:func:`hf_punctcase.evaluation.core_words`) — and the share of
"um"/"uh" removed. On the Switchboard calls also the share kept of the core words their annotation
keeps, and the annotation's own removal as a row: the measure counts a restart that repeats no word ("i
was- we went") as needed words, which a removal that agrees with the annotators removes. With
``--thresholds T ...`` the same figures at other decision thresholds of the disfluency head, from the
scores of the same restoration (a word is removed where its ``disfluency_score`` exceeds the threshold;
the model's own is its config's ``disfluency_threshold``, 0.5 where it sets none).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir, load_punct_case_dataset
from hf_punctcase.data.sources import read_aci_bench, read_swda
from hf_punctcase.evaluation import DEV_SETS, FILLER_WORDS, disfluency_table, evaluate_disfluency, removal_figures
from hf_punctcase.options.disfluency import removes_filler
from hf_punctcase.labels import LabelScheme
from hf_punctcase.options import DISFLUENCY
from hf_punctcase.restoration import SENTENCE_END_LABELS


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


def conversations(root, calls) -> dict[str, tuple[list[list[str]], list[list[bool]] | None]]:
    """The real conversations ``--core`` measures, by name: their words, lowercased and without marks,
    and where an annotation gives them (the Switchboard calls) the words it marks disfluent."""
    scheme = LabelScheme()
    sets = {dev_set.name: dev_set for dev_set in DEV_SETS}
    found: dict[str, tuple[list[list[str]], list[list[bool]] | None]] = {
        name: ([ref.words for ref in sets[name].load(root, scheme)], None) for name in ("SwDA val", "ACI-BENCH valid")
    }
    for split, dataset in calls.items():
        disfluent = dataset.features[DISFLUENCY.word_column].feature.str2int(DISFLUENCY.positive_label)
        found[f"Switchboard {split} calls"] = (
            [list(row["words"]) for row in dataset],
            [[label == disfluent for label in row[DISFLUENCY.word_column]] for row in dataset],
        )
    return {name: ([[word.lower() for word in words] for words in documents], annotated) for name, (documents, annotated) in found.items()}


def core_removal(
    restorer, documents: list[list[str]], annotated: list[list[bool]] | None, batch_size: int, thresholds: list[float]
) -> dict:
    """``remove_disfluencies=True`` on the documents: :func:`removal_figures` at the model's threshold,
    checked against the scores of a plain restoration, and at each of ``thresholds`` from those scores;
    with ``annotated``, also the annotation's own removal (``"annotation"``)."""
    texts = [" ".join(words) for words in documents]
    removed = [[entry["removed"] for entry in result["words"]] for result in restorer(texts, batch_size=batch_size, remove_disfluencies=True)]
    scores = [[entry["disfluency_score"] for entry in result["words"]] for result in restorer(texts, batch_size=batch_size)]
    own = DISFLUENCY.threshold_in(restorer.model.config)

    def removal_at(threshold: float) -> list[list[bool]]:
        # A filled pause goes at its own threshold whatever the threshold of the other words.
        return [
            [score > threshold or removes_filler(word, score) for word, score in zip(words, row)]
            for words, row in zip(documents, scores)
        ]

    if removed != removal_at(own):
        raise RuntimeError("internal error: remove_disfluencies removed other words than the head's scores say")
    figures = {"threshold": own, **removal_figures(documents, removed, annotated)}
    figures["at_thresholds"] = {str(t): removal_figures(documents, removal_at(t), annotated) for t in thresholds}
    if annotated is not None:
        figures["annotation"] = removal_figures(documents, annotated, annotated)
    return figures


#: The filled pauses whose removal ``--utterances`` reports one by one.
SPOKEN_FILLERS = ("um", "uh", "er", "ah", "hmm", "mm")


def utterances(root) -> dict[str, list[list[str]]]:
    """Real talk one input an utterance, as an ASR gives it (lowercased words without marks): SwDA's
    validation utterances and ACI-BENCH's validation doctor–patient turns (a line a turn)."""
    scheme = LabelScheme()
    swda = root / "conversational" / "swda" / "swda_conversations.jsonl"
    found = {"SwDA val utterances": [], "ACI-BENCH valid turns": []}
    with open(swda, encoding="utf-8") as handle:
        for line in handle:
            conversation = json.loads(line)
            if conversation["split"] == "val":
                found["SwDA val utterances"] += [scheme.parse(u["text"]).words for u in conversation["utterances"]]
    # The reader takes the speaker tags out and leaves a line a turn.
    for _, dialogue in read_aci_bench(root / "medical" / "aci_bench" / "challenge_data" / "valid.csv", punctuated_only=False):
        found["ACI-BENCH valid turns"] += [scheme.parse(turn).words for turn in dialogue.splitlines()]
    return {name: [[w.lower() for w in words] for words in texts if words] for name, texts in found.items()}


def call_sentences(dataset) -> tuple[list[list[str]], list[list[bool]]]:
    """A split's Switchboard calls cut at the sentence ends their transcribers wrote, one input a
    sentence (as an ASR that cuts at pauses gives them; the calls keep no turns), lowercased, with the
    words their annotation marks disfluent."""
    punct_names = dataset.features["punct"].feature.names
    disfluent = dataset.features[DISFLUENCY.word_column].feature.str2int(DISFLUENCY.positive_label)
    sentences: list[list[str]] = []
    annotated: list[list[bool]] = []
    for row in dataset:
        words: list[str] = []
        flags: list[bool] = []
        for word, punct, label in zip(row["words"], row["punct"], row[DISFLUENCY.word_column]):
            words.append(word.lower())
            flags.append(label == disfluent)
            if punct_names[punct] in SENTENCE_END_LABELS:
                sentences.append(words)
                annotated.append(flags)
                words, flags = [], []
        if words:
            sentences.append(words)
            annotated.append(flags)
    return sentences, annotated


def utterance_removal(restorer, texts: list[list[str]], batch_size: int, annotated: list[list[bool]] | None = None) -> dict:
    """``remove_disfluencies=True`` on each utterance alone: :func:`removal_figures` (against
    ``annotated``, the words an annotation marks disfluent, where given), and for each of
    :data:`SPOKEN_FILLERS` its count and the share removed, and the utterances of fillers only that come
    back as empty text."""
    results = restorer([" ".join(words) for words in texts], batch_size=batch_size, remove_disfluencies=True)
    removed = [[entry["removed"] for entry in result["words"]] for result in results]
    figures = removal_figures(texts, removed, annotated)
    for filler in SPOKEN_FILLERS:
        flags = [out for words, gone in zip(texts, removed) for word, out in zip(words, gone) if word == filler]
        figures[f"{filler}_count"] = len(flags)
        figures[f"{filler}_removed"] = float(np.mean(flags)) if flags else float("nan")
    only = [result["text"] == "" for words, result in zip(texts, results) if all(w in SPOKEN_FILLERS for w in words)]
    figures["filler_only_utterances"] = len(only)
    figures["filler_only_empty"] = float(np.mean(only)) if only else float("nan")
    return figures


def kept_of_annotated(figures: dict) -> str:
    """The share of the core words an annotation keeps that a removal kept, or a dash without one."""
    if "annotated_core_words_kept" not in figures:
        return "–"
    return f"{100 * figures['annotated_core_words_kept']:.2f}% of {figures['annotated_core_words']:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--splits", nargs="+", default=["validation", "test"], choices=["train", "validation", "test"])
    parser.add_argument("--swda", action="store_true", help="also filler removal on SwDA's validation conversations")
    parser.add_argument("--core", action="store_true", help="also core words kept and fillers removed on real conversation")
    parser.add_argument("--thresholds", nargs="+", type=float, default=[], help="with --core: also at these thresholds")
    parser.add_argument(
        "--utterances", action="store_true",
        help="also core words kept and fillers removed with one input an utterance (SwDA val, ACI-BENCH valid turns, "
        "the Switchboard calls of --splits cut at their sentence ends)",
    )
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
    if args.core:
        rows = [
            "| conversations | words | removal | core words kept | kept of the core words the annotation keeps | um/uh removed |",
            "|---|---|---|---|---|---|",
        ]
        for name, (documents, annotated) in conversations(root, calls).items():
            figures[name] = found = core_removal(restorer, documents, annotated, args.batch_size, args.thresholds)
            removals = [(f"threshold {found['threshold']:.2f}", found)]
            removals += [(f"threshold {float(t):.2f}", at) for t, at in found["at_thresholds"].items()]
            removals += [("the annotation", found["annotation"])] if "annotation" in found else []
            for removal, at in removals:
                rows.append(
                    f"| {name} | {at['words']:,} | {removal} | {100 * at['core_words_kept']:.2f}% of {at['core_words']:,} "
                    f"| {kept_of_annotated(at)} | {100 * at['fillers_removed']:.1f}% of {at['fillers']:,} |"
                )
        print("\n" + "\n".join(rows))
    if args.utterances:
        rows = [
            "| one input an utterance | utterances | words | core words kept | kept of the core words the annotation keeps "
            "| um/uh removed | " + " | ".join(SPOKEN_FILLERS) + " | fillers only → empty |",
            "|---|---|---|---|---|---|" + "---|" * len(SPOKEN_FILLERS) + "---|",
        ]
        talk = {name: (texts, None) for name, texts in utterances(root).items()}
        talk.update({f"Switchboard {split} calls, a sentence each": call_sentences(calls[split]) for split in args.splits})
        for name, (texts, annotated) in talk.items():
            figures[name] = at = utterance_removal(restorer, texts, args.batch_size, annotated)
            per_filler = " | ".join(
                f"{100 * at[f + '_removed']:.1f}% of {at[f + '_count']:,}" if at[f + "_count"] else "–" for f in SPOKEN_FILLERS
            )
            rows.append(
                f"| {name} | {len(texts):,} | {at['words']:,} | {100 * at['core_words_kept']:.2f}% of {at['core_words']:,} "
                f"| {kept_of_annotated(at)} | {100 * at['fillers_removed']:.1f}% of {at['fillers']:,} | {per_filler} "
                f"| {100 * at['filler_only_empty']:.1f}% of {at['filler_only_utterances']:,} |"
            )
        print("\n" + "\n".join(rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()

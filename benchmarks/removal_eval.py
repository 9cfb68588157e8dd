#!/usr/bin/env python
"""Disfluency removal on long transcripts: what ``remove_disfluencies=True`` gives and costs against the
kept words restored again whole, the second restoration it replaces where only the sentences that lost
words are restored again (``hf_punctcase.options.disfluency.spliced_fluent``).

    python benchmarks/removal_eval.py --model default
    python benchmarks/removal_eval.py --model default --transcript-words 3000 --conversations 12

For each set, one input a transcript: held-out TED talks (IWSLT dev2010 and tst2012) cut into transcripts
of ``--transcript-words`` words, and SwDA's validation conversations whole (utterances joined), both
lowercased and unpunctuated as ASR output. The punctuation and casing F1 of the kept words against
their reference labels, (a) as ``remove_disfluencies=True`` gives them and (b) with the kept words
restored whole as a transcript of their own; the share of kept words written alike by both; and the time
of the plain call, of the removal and of the two restorations (the plain call and the whole kept words),
summed over the set, in one process.
"""

from __future__ import annotations

import argparse
import json
import time

import hf_punctcase
from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir, read_iwslt_cased
from hf_punctcase.evaluation import score_labels
from hf_punctcase.labels import LabeledWords, LabelScheme


def ted_transcripts(root, size: int) -> list[LabeledWords]:
    scheme = LabelScheme()
    talks = [scheme.parse(text) for name in ("dev2010_cased.txt", "tst2012_cased.txt")
             for _, text in read_iwslt_cased([root / "iwslt" / name])]
    return [LabeledWords(t.words[k:k + size], t.punct[k:k + size], t.case[k:k + size]) for t in talks for k in range(0, len(t.words), size)]


def swda_conversations(root, count: int) -> list[LabeledWords]:
    scheme = LabelScheme()
    found = []
    with open(root / "conversational" / "swda" / "swda_conversations.jsonl", encoding="utf-8") as handle:
        for line in handle:
            conversation = json.loads(line)
            if conversation["split"] == "val" and len(found) < count:
                found.append(scheme.parse(" ".join(u["text"] for u in conversation["utterances"])))
    return found


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def compare(restorer, references: list[LabeledWords]) -> dict:
    scheme = LabelScheme()
    truth = {"punct": [], "case": []}
    given = {"punct": [], "case": []}
    whole = {"punct": [], "case": []}
    alike = kept_words = 0
    seconds = {"plain": 0.0, "removal": 0.0, "whole": 0.0}
    for reference in references:
        words = [word.lower() for word in reference.words]
        _, plain_seconds = timed(lambda: restorer(words, is_split_into_words=True))
        result, removal_seconds = timed(lambda: restorer(words, is_split_into_words=True, remove_disfluencies=True))
        kept = [i for i, entry in enumerate(result["words"]) if not entry["removed"]]
        again, whole_seconds = timed(lambda: restorer([words[i] for i in kept], is_split_into_words=True))
        seconds["plain"] += plain_seconds
        seconds["removal"] += removal_seconds
        seconds["whole"] += plain_seconds + whole_seconds
        for rank, i in enumerate(kept):
            entry, other = result["words"][i], again["words"][rank]
            truth["punct"].append(reference.punct[i])
            truth["case"].append(reference.case[i])
            given["punct"].append(entry["punctuation"])
            given["case"].append(entry["casing"])
            whole["punct"].append(other["punctuation"])
            whole["case"].append(other["casing"])
            alike += entry["word"] == other["word"]
        kept_words += len(kept)
    removal = score_labels(scheme, truth["punct"], given["punct"], truth["case"], given["case"])
    restored_whole = score_labels(scheme, truth["punct"], whole["punct"], truth["case"], whole["case"])
    return {
        "transcripts": len(references),
        "words": sum(len(reference) for reference in references),
        "kept_words": kept_words,
        "removal_punct_f1": 100 * removal["punct_overall_f1"],
        "removal_case_f1": 100 * removal["case_overall_f1"],
        "whole_punct_f1": 100 * restored_whole["punct_overall_f1"],
        "whole_case_f1": 100 * restored_whole["case_overall_f1"],
        "kept_words_alike": 100 * alike / max(1, kept_words),
        "seconds": seconds,
        "removal_times_plain": seconds["removal"] / seconds["plain"],
        "two_restorations_times_plain": seconds["whole"] / seconds["plain"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--transcript-words", type=int, default=3000)
    parser.add_argument("--conversations", type=int, default=12, help="SwDA validation conversations")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    root = data_dir(args.data_dir)
    restorer = load_restorer(args)
    restorer(["warm", "up"], is_split_into_words=True, remove_disfluencies=True)
    sets = {
        f"TED dev2010+tst2012, {args.transcript_words:,}-word transcripts": ted_transcripts(root, args.transcript_words),
        "SwDA val conversations": swda_conversations(root, args.conversations),
    }
    figures = {"machine": hf_punctcase.hardware.detect_hardware().describe(), "plan": str(getattr(restorer, "execution_plan", "")), "sets": {}}
    for name, references in sets.items():
        figures["sets"][name] = compare(restorer, references)
    print(json.dumps(figures, indent=2))
    print("\n| set | transcripts | kept words | removal: punct. / casing F1 | kept words restored whole | written alike | removal × plain | two restorations × plain |")
    print("|---|---:|---:|---|---|---:|---:|---:|")
    for name, row in figures["sets"].items():
        print(
            f"| {name} | {row['transcripts']} | {row['kept_words']:,} | {row['removal_punct_f1']:.2f} / {row['removal_case_f1']:.2f} "
            f"| {row['whole_punct_f1']:.2f} / {row['whole_case_f1']:.2f} | {row['kept_words_alike']:.2f}% "
            f"| {row['removal_times_plain']:.2f} | {row['two_restorations_times_plain']:.2f} |"
        )
    if args.json:
        from hf_punctcase.atomic_files import atomic_write_text

        atomic_write_text(args.json, json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Dev benchmark: the public punct-case pipeline on every dev set, scored with the punct_case metric.

    python benchmarks/dev_eval.py --model default --json dev.json
    python benchmarks/dev_eval.py --model runs/x/final --data-dir ../shared/data --no-truecase
    python benchmarks/dev_eval.py --window-words 160 --context-words 50   # other pipeline windows
    python benchmarks/dev_eval.py --dtype float32 --sets TED                # fp32, TED dev only
    python benchmarks/dev_eval.py --device cuda:0 --batch-size 64           # on a GPU
    python benchmarks/dev_eval.py --sets TED --asr-dev runs/speech/ted_dev_asr.jsonl  # + the speech loop's TED ASR
    python benchmarks/dev_eval.py --no-truecase --outputs runs/dev_outputs   # + every restored word, to compare
    python benchmarks/dev_eval.py --model on-device --utterances             # short texts of 1-3 sentences
    python benchmarks/dev_eval.py --model on-device --utterances --no-ends-sentence   # ... their ends left to the model

Dev sets: those of ``hf_punctcase.evaluation.DEV_SETS`` (TED dev2010 + tst2012, IWSLT dev2012 in Che et
al.'s layout, SwDA val, MTS-Dialog validation, ACI-BENCH valid) and ``ASR_DEV_SETS`` (ACI-BENCH valid real
ASR output, scored against the human transcript after alignment); with ``--asr-dev``, speech loop outputs
(recipes/speech_loop.py) as a reference set and an ASR set over the same documents. The pipeline sees each reference's words
lowercased and unpunctuated (for the ASR set: the ASR words). Sets without reliable casing are scored on
punctuation only. Casing is compared with the `truecase` package (a statistical truecaser, `pip install -e
".[bench]"`) as a baseline. Because the pipeline capitalises after each sentence end it writes, a
casing error can be punctuation's: each cased set also reports how many casing errors fall on words
whose sentence start the reference and the restored text dispute, and the casing F1 on the other words.

``--outputs DIR`` writes each reference set's restored words (``DIR/<set>.jsonl``, one document a line: each
word's text, labels and scores) and every score without timings (``DIR/scores.json``): two runs whose
outputs are the same byte for byte (``diff -r``) restored every dev set the same way.

``--utterances`` scores each reference set as short texts of whole sentences, 1, 2 and 3 in turn
(:func:`hf_punctcase.evaluation.short_texts`), each restored as an input of its own, as caption lines,
dialogue turns and voice commands come; the ASR sets stay whole documents. ``--no-ends-sentence`` leaves
the mark of each input's last word to the model (``ends_sentence=False``) instead of closing its last sentence.

``--dtype``: ``auto`` is the pipeline's default (as hf_punctcase.loading.plan_execution plans it on this machine; --verbose says how);
``float32`` / ``bfloat16`` load the weights in that dtype.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import (
    ASR_DEV_SETS,
    DEV_SETS,
    available,
    restore_references,
    short_texts,
    score_asr_pairs,
    speech_loop_dev_sets,
)
from hf_punctcase.labels import case_label_of
from hf_punctcase.metrics import PunctCase
from hf_punctcase.restoration import SENTENCE_END_LABELS



def truecase_labels(truecaser, words: list[str]) -> list[str]:
    cased = truecaser.get_true_case_from_tokens(list(words), out_of_vocabulary_token_option="as-is")
    return [case_label_of(token) for token in cased]


def scored_pairs(references, predictions, key: str, reference_key: str) -> list[tuple[str, str]]:
    """(reference, predicted) label pairs; a reference label of None (one a source could not give) is left out."""
    return [
        (label, word[key])
        for ref, predicted in zip(references, predictions)
        for label, word in zip(getattr(ref, reference_key), predicted)
        if label is not None
    ]


def starts_agree(references, predictions) -> list[bool]:
    """Per scored casing label: whether the reference and the restored text agree on a sentence start
    before the word (a document's first word starts one in both)."""
    agree = []
    for ref, predicted in zip(references, predictions):
        reference_end = restored_end = True
        for label, mark, word in zip(ref.case, ref.punct, predicted):
            if label is not None:
                agree.append(reference_end == restored_end)
            reference_end, restored_end = mark in SENTENCE_END_LABELS, word["punctuation"] in SENTENCE_END_LABELS
    return agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sets", nargs="+", default=None,
                        help="only the dev sets whose name starts with one of these (default: all)")
    parser.add_argument("--argmax", action="store_true",
                        help="each head's argmax (consistent_casing=False) instead of the joint decision")
    parser.add_argument("--no-ends-sentence", action="store_true",
                        help="leave the last word's mark to the model (ends_sentence=False)")
    parser.add_argument("--utterances", action="store_true",
                        help="score the reference sets as short texts of 1, 2 and 3 sentences in turn, each an input")
    parser.add_argument("--no-truecase", action="store_true", help="skip the truecase baseline")
    parser.add_argument("--json", default=None, help="write every score here")
    parser.add_argument("--outputs", default=None,
                        help="write every restored word (DIR/<set>.jsonl) and the scores without timings (DIR/scores.json)")
    parser.add_argument("--asr-dev", nargs="+", default=[],
                        help="speech loop outputs to score as reference + ASR sets (recipes/speech_loop.py)")
    args = parser.parse_args()
    loop_sets = [speech_loop_dev_sets(path) for path in args.asr_dev]
    dev_sets = DEV_SETS + tuple(reference for reference, _ in loop_sets)
    asr_dev_sets = ASR_DEV_SETS + tuple(asr for _, asr in loop_sets)
    given = [dev_set for pair in loop_sets for dev_set in pair]  # scored whatever --sets says
    call_kwargs = {"consistent_casing": False} if args.argmax else {}
    if args.no_ends_sentence:
        call_kwargs["ends_sentence"] = False

    restorer = load_restorer(args)
    scheme = restorer.scheme
    root = data_dir(args.data_dir)
    truecaser = None
    if not args.no_truecase:
        import truecase

        truecaser = truecase.get_truecaser()

    def chosen(dev_sets):
        """The sets ``--sets`` names whose files are present (an absent one is said and skipped)."""
        for dev_set in dev_sets:
            named = dev_set in given or any(dev_set.name.startswith(prefix) for prefix in args.sets or [""])
            if not named:
                continue
            if available(dev_set, root):
                yield dev_set
            else:
                print(f"{dev_set.name}: files absent under {root}, skipped", flush=True)

    report = {}
    for dev_set in chosen(dev_sets):
        references = dev_set.load(root, scheme)
        if args.utterances:
            references = short_texts(references)
        predictions, seconds = restore_references(restorer, references, args.batch_size, **call_kwargs)
        punct_pairs = scored_pairs(references, predictions, "punctuation", "punct")
        words = sum(len(ref) for ref in references)
        entry = {
            "words": words,
            "words_per_second": words / seconds,
            "punctuation": PunctCase.scores_from_pairs(punct_pairs, "O", scheme.punct_labels),
        }
        if dev_set.has_casing:
            case_pairs = scored_pairs(references, predictions, "casing", "case")
            entry["casing"] = PunctCase.scores_from_pairs(case_pairs, "LOWER", scheme.case_labels)
            # Consistent casing capitalises after a sentence end: how much of the casing error is punctuation's.
            agree = starts_agree(references, predictions)
            errors = [label != predicted for label, predicted in case_pairs]
            entry["casing_errors"] = sum(errors)
            entry["casing_errors_at_disputed_starts"] = sum(e and not a for e, a in zip(errors, agree))
            entry["casing_at_agreed_starts"] = PunctCase.scores_from_pairs(
                [pair for pair, a in zip(case_pairs, agree) if a], "LOWER", scheme.case_labels
            )
            if truecaser is not None:
                truecase_pairs = [
                    (label, predicted)
                    for ref in references
                    for label, predicted in zip(ref.case, truecase_labels(truecaser, ref.words))
                    if label is not None
                ]
                entry["casing_truecase"] = PunctCase.scores_from_pairs(truecase_pairs, "LOWER", scheme.case_labels)
        report[dev_set.name] = entry
        if args.outputs:
            outputs = Path(args.outputs)
            outputs.mkdir(parents=True, exist_ok=True)
            with open(outputs / f"{dev_set.name}.jsonl", "w", encoding="utf-8") as file:
                for document in predictions:
                    file.write(json.dumps(document, ensure_ascii=False) + "\n")
        print(f"{dev_set.name}: {words:,} words, punctuation F1 {100 * entry['punctuation']['overall_f1']:.1f}", flush=True)

    # Real ASR output against the human transcript, aligned word by word.
    for asr_set in chosen(asr_dev_sets):
        pairs = asr_set.load(root, scheme)
        scores, seconds = score_asr_pairs(restorer, pairs, args.batch_size, **call_kwargs)
        hypotheses = [words for words, _ in pairs]
        words = sum(len(h) for h in hypotheses)
        report[asr_set.name] = {"words": words, "words_per_second": words / seconds, "punctuation": scores}
        print(f"{asr_set.name}: {words:,} words, punctuation F1 {100 * scores['overall_f1']:.1f}", flush=True)

    print(
        f"\nmodel {args.model}, {'short texts of 1-3 sentences' if args.utterances else 'whole documents'}, "
        f"ends_sentence={not args.no_ends_sentence}, {restorer.execution_plan.runtime} "
        f"{restorer.execution_plan.precision}, device {restorer.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads\n"
    )
    print(markdown_table(report))
    for name, entry in report.items():
        if "casing_errors" in entry:
            print(
                f"\n{name}: {entry['casing_errors_at_disputed_starts']:,} of {entry['casing_errors']:,} casing errors "
                "are on words whose sentence start the reference and the restored text dispute; casing F1 on "
                f"the words whose start they agree on: {100 * entry['casing_at_agreed_starts']['overall_f1']:.1f}"
            )
    if args.outputs:
        untimed = {name: {key: value for key, value in entry.items() if key != "words_per_second"}
                   for name, entry in report.items()}
        (Path(args.outputs) / "scores.json").write_text(json.dumps(untimed, indent=2))
    if args.json:
        # Each top-level key is a dev set (benchmarks/ablation_table.py reads the reports as they are).
        Path(args.json).write_text(json.dumps(report, indent=2))


def markdown_table(report: dict) -> str:
    def f1(scores: dict | None, key: str = "overall_f1") -> str:
        if scores is None:
            return "–"
        value = scores[key] if key.startswith("overall") else scores.get(key, {}).get("f1")
        return "–" if value is None else f"{100 * value:.1f}"

    lines = [
        "| dev set | words | , F1 | . F1 | ? F1 | punct. overall F1 | punct. SER | Word F1 | WORD F1 | MiXed F1 | casing overall F1 | truecase casing F1 | words/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in report.items():
        punct, case = entry["punctuation"], entry.get("casing")
        lines.append(
            f"| {name} | {entry['words']:,} | {f1(punct, 'COMMA')} | {f1(punct, 'PERIOD')} | {f1(punct, 'QUESTION')} | "
            f"**{f1(punct)}** | {100 * punct['slot_error_rate']:.1f} | {f1(case, 'UPPER_FIRST')} | {f1(case, 'ALL_UPPER')} | "
            f"{f1(case, 'MIXED')} | **{f1(case)}** | {f1(entry.get('casing_truecase'))} | {entry['words_per_second']:,.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()

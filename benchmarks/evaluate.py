#!/usr/bin/env python
"""Dev benchmark: the public punct-case pipeline on every dev split, scored with the punct_case metric.

    python benchmarks/evaluate.py --model default --json dev.json
    python benchmarks/evaluate.py --model runs/x/final --data-dir ../shared/data --no-truecase
    python benchmarks/evaluate.py --window-words 160 --context-words 50   # other pipeline windows

Dev sets: TED (IWSLT dev2010 + tst2012, cased), IWSLT dev2012 (Che layout, punctuation only), SwDA val,
MTS-Dialog validation, ACI-BENCH valid (lowercase dialogues: punctuation only), and ACI-BENCH valid
real ASR output scored against the human transcript after alignment (ASR mode). The pipeline sees each
reference's words lowercased and unpunctuated (for the ASR set: the ASR words). Casing is compared
with the `truecase` package (a statistical truecaser, `pip install -e ".[bench]"`) as a baseline.
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's folder comes first on sys.path and its name would shadow the
# `evaluate` package that the metric imports.
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.path.dirname(os.path.abspath(__file__))]

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import hf_punctcase  # noqa: E402
from hf_punctcase.data import (  # noqa: E402
    data_dir,
    read_aci_asr_pairs,
    read_aci_bench,
    read_che,
    read_iwslt_cased,
    read_mts_dialog,
    read_swda,
)
from hf_punctcase.evaluation import restore_references  # noqa: E402
from hf_punctcase.labels import LabeledWords, LabelScheme, case_label_of  # noqa: E402
from hf_punctcase.metrics import PunctCase  # noqa: E402


def dev_sets(root: Path, scheme: LabelScheme) -> dict[str, tuple[list[LabeledWords], bool]]:
    """name → (references, whether they have casing)."""

    def parsed(documents):
        return [scheme.parse(text) for _, text in documents]

    aci = root / "medical" / "aci_bench"
    return {
        "TED dev2010+tst2012": (
            parsed(read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt", root / "iwslt" / "tst2012_cased.txt"])), True
        ),
        "IWSLT dev2012 (Che)": ([read_che(root / "iwslt" / "dev2012_che_labeled.tsv")], False),
        "SwDA val": (parsed(read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", split="val")), True),
        "MTS-Dialog validation": (parsed(read_mts_dialog(root / "medical" / "mts_dialog" / "MTS-Dialog-ValidationSet.csv")), True),
        "ACI-BENCH valid": (parsed(read_aci_bench(aci / "challenge_data" / "valid.csv")), False),
    }


def truecase_labels(truecaser, words: list[str]) -> list[str]:
    cased = truecaser.get_true_case_from_tokens(list(words), out_of_vocabulary_token_option="as-is")
    return [case_label_of(token) for token in cased]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="checkpoint folder, or 'default' for the embedded model")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--no-truecase", action="store_true", help="skip the truecase baseline")
    parser.add_argument("--json", default=None, help="write every score here")
    parser.add_argument("--window-words", type=int, default=None, help="the pipeline's window_words (default: its own, 200)")
    parser.add_argument("--context-words", type=int, default=None, help="the pipeline's context_words (default: its own, 50)")
    args = parser.parse_args()
    windows = {
        key: value
        for key, value in (("window_words", args.window_words), ("context_words", args.context_words))
        if value is not None
    }

    restorer = hf_punctcase.load_pipeline(None if args.model == "default" else args.model)
    scheme = restorer.scheme
    root = data_dir(args.data_dir)
    truecaser = None
    if not args.no_truecase:
        import truecase

        truecaser = truecase.get_truecaser()

    report = {}
    for name, (references, has_casing) in dev_sets(root, scheme).items():
        predictions, seconds = restore_references(restorer, references, args.batch_size, **windows)
        punct_pairs, case_pairs, truecase_pairs = [], [], []
        for ref, predicted in zip(references, predictions):
            punct_pairs += [(r, w["punctuation"]) for r, w in zip(ref.punct, predicted)]
            if has_casing:
                case_pairs += [(r, w["casing"]) for r, w in zip(ref.case, predicted)]
                if truecaser is not None:
                    truecase_pairs += list(zip(ref.case, truecase_labels(truecaser, ref.words)))
        words = len(punct_pairs)
        entry = {
            "words": words,
            "words_per_second": words / seconds,
            "punctuation": PunctCase.scores_from_pairs(punct_pairs, "O", scheme.punct_labels),
        }
        if has_casing:
            entry["casing"] = PunctCase.scores_from_pairs(case_pairs, "LOWER", scheme.case_labels)
            if truecase_pairs:
                entry["casing_truecase"] = PunctCase.scores_from_pairs(truecase_pairs, "LOWER", scheme.case_labels)
        report[name] = entry
        print(f"{name}: {words:,} words, punctuation F1 {100 * entry['punctuation']['overall_f1']:.1f}", flush=True)

    # Real ASR output (ACI-BENCH virtscribe) against the human transcript, aligned word by word.
    pairs = list(read_aci_asr_pairs(root / "medical" / "aci_bench" / "src_experiment_data"))
    hypotheses = [scheme.parse(asr).words for _, asr, _ in pairs]
    references = [scheme.parse(human) for _, _, human in pairs]
    start = time.perf_counter()
    results = restorer([" ".join(words) for words in hypotheses], batch_size=args.batch_size, **windows)
    seconds = time.perf_counter() - start
    metric = PunctCase()
    scores = metric.compute(
        predictions=[[w["punctuation"] for w in r["words"]] for r in results],
        references=[ref.punct for ref in references],
        prediction_words=hypotheses,
        reference_words=[ref.words for ref in references],
    )
    report["ACI-BENCH valid ASR vs human (aligned)"] = {
        "words": sum(len(h) for h in hypotheses),
        "words_per_second": sum(len(h) for h in hypotheses) / seconds,
        "punctuation": scores,
    }

    print(markdown_table(report))
    if args.json:
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

#!/usr/bin/env python
"""Partly punctuated input with ``keep_punctuation=True``: what an ASR gives when its punctuation drops
out over long spans. Kept stretches should leave as they came, bare ones be restored as well as when
everything is bare.

    python benchmarks/kept_eval.py --model default
    python benchmarks/kept_eval.py --model on-device --kept 3 --bare 3 --show-errors 20
    python benchmarks/kept_eval.py --model default --cased-bare     # bare stretches keep their capitals

The set: the TED dev talks (IWSLT dev2010 and tst2012, one segment a line), cut into runs of ``--kept``
segments left as the transcribers wrote them and ``--bare`` segments lowercased without marks, in turn,
each talk one input. Reported: of the kept stretches' words, the share that leave exactly as written
(and those that get another mark or another written form); of the bare stretches' words, punctuation
and casing F1, against the same words' F1 when the whole talk arrives bare (the same model, the same
call without kept text). With ``--cased-bare`` the bare stretches lose their marks but keep their
capitals (an ASR that cases but does not punctuate), the harder case for telling them apart.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hf_punctcase.cli import add_model_arguments, load_restorer
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import score_labels
from hf_punctcase.labels import LEADING_PUNCTUATION, LabeledWords, LabelScheme, split_trailing_marks
from hf_punctcase.restoration import decoding

TED_DEV = ("iwslt/dev2010_cased.txt", "iwslt/tst2012_cased.txt")


def partly_punctuated(
    path: Path, kept: int, bare: int, scheme: LabelScheme, cased_bare: bool = False
) -> tuple[list[str], list[bool], LabeledWords]:
    """One IWSLT file as one input (as the dev sets read it: a running document): its input tokens,
    whether each token is of a kept stretch, and its reference (one word per token). ``cased_bare``:
    bare words keep their capitals (their marks, leading ones included, still go)."""
    segments = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    tokens, kept_flags = [], []
    for number, segment in enumerate(segments):
        keep = number % (kept + bare) < kept
        if keep or cased_bare:
            pieces = segment.split()
            # Only tokens that are words (a lone "--" is no word): the input keeps one token a word.
            words = [pieces[i] for i in scheme.parse_tokens(pieces)[1]]
            if not keep:
                words = [split_trailing_marks(word.lstrip(LEADING_PUNCTUATION))[0] or word for word in words]
        else:
            words = scheme.parse(segment).words
        tokens += words
        kept_flags += [keep] * len(words)
    reference = scheme.parse(" ".join(segments))
    if len(reference) != len(tokens):
        raise RuntimeError(f"internal error: {len(tokens)} tokens for {len(reference)} reference words")
    return tokens, kept_flags, reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--kept", type=int, default=3, help="segments a kept stretch (default: %(default)s)")
    parser.add_argument("--bare", type=int, default=3, help="segments a bare stretch (default: %(default)s)")
    parser.add_argument("--show-errors", type=int, default=0, help="print this many kept words that changed")
    parser.add_argument(
        "--bare-run-words", type=int, default=None,
        help="the fewest words without a mark that make a run bare (default: the library's BARE_RUN_WORDS)",
    )
    parser.add_argument(
        "--capital-run-words", type=int, default=None,
        help="inside a bare run, the most words from its first capital to a closing mark that make them written "
        "(default: the library's CAPITAL_RUN_WORDS; 1: a bare run stays bare whatever its capitals)",
    )
    parser.add_argument("--cased-bare", action="store_true", help="bare stretches keep their capitals")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    root = data_dir(args.data_dir)
    if args.bare_run_words:
        decoding.BARE_RUN_WORDS = args.bare_run_words  # read at each call: this process's runs use it
    if args.capital_run_words:
        decoding.CAPITAL_RUN_WORDS = args.capital_run_words
    restorer = load_restorer(args)
    scheme = restorer.scheme
    talks = [partly_punctuated(root / name, args.kept, args.bare, scheme, args.cased_bare) for name in TED_DEV]
    mixed = restorer([tokens for tokens, _, _ in talks], is_split_into_words=True, keep_punctuation=True, batch_size=args.batch_size)
    stripped = restorer([ref.words for _, _, ref in talks], is_split_into_words=True, batch_size=args.batch_size)
    kept_words = same = other_mark = other_form = 0
    errors = []
    bare = {"mixed": ([], [], [], []), "stripped": ([], [], [], [])}
    for (tokens, flags, reference), ours, alone in zip(talks, mixed, stripped):
        for i, (token, keep) in enumerate(zip(tokens, flags)):
            out = ours["words"][i]["word"]
            if keep:
                kept_words += 1
                core_in, trail_in = split_trailing_marks(token)
                core_out, trail_out = split_trailing_marks(out)
                same += out == token
                other_mark += trail_in != trail_out
                other_form += core_in != core_out
                if out != token and len(errors) < args.show_errors:
                    errors.append(f"{' '.join(tokens[max(0, i - 4):i])} [{token} → {out}] {' '.join(tokens[i + 1:i + 4])}")
            else:
                for key, result in (("mixed", ours), ("stripped", alone)):
                    true_p, pred_p, true_c, pred_c = bare[key]
                    true_p.append(reference.punct[i])
                    pred_p.append(result["words"][i]["punctuation"])
                    true_c.append(reference.case[i])
                    pred_c.append(result["words"][i]["casing"])
    scores = {key: score_labels(scheme, *values) for key, values in bare.items()}
    figures = {
        "model": args.model, "plan": restorer.execution_plan.describe(), "kept": args.kept, "bare": args.bare,
        "bare_run_words": getattr(decoding, "BARE_RUN_WORDS", None),
        "capital_run_words": getattr(decoding, "CAPITAL_RUN_WORDS", None), "cased_bare": args.cased_bare,
        "kept_words": kept_words, "kept_words_as_written": same / kept_words,
        "kept_words_other_mark": other_mark / kept_words, "kept_words_other_form": other_form / kept_words,
        "bare_words": len(bare["mixed"][0]),
        "bare_punct_f1": scores["mixed"]["punct_overall_f1"], "bare_case_f1": scores["mixed"]["case_overall_f1"],
        "all_bare_punct_f1": scores["stripped"]["punct_overall_f1"], "all_bare_case_f1": scores["stripped"]["case_overall_f1"],
    }
    print(
        f"model {args.model}: {figures['plan']}; runs of {getattr(decoding, 'BARE_RUN_WORDS', '(no rule)')}+ words without a mark "
        f"are bare, but from a capital closed by a mark within {getattr(decoding, 'CAPITAL_RUN_WORDS', '(no rule)')} words"
        + ("; bare stretches cased" if args.cased_bare else "")
    )
    print(
        f"kept stretches: {kept_words:,} words, {100 * figures['kept_words_as_written']:.2f}% as written "
        f"({100 * figures['kept_words_other_mark']:.2f}% another mark, {100 * figures['kept_words_other_form']:.2f}% another form)"
    )
    print(
        f"bare stretches: {figures['bare_words']:,} words, punctuation / casing F1 {100 * figures['bare_punct_f1']:.1f} / "
        f"{100 * figures['bare_case_f1']:.1f}; the same words with the whole talk bare "
        f"{100 * figures['all_bare_punct_f1']:.1f} / {100 * figures['all_bare_case_f1']:.1f}"
    )
    for line in errors:
        print("  " + line)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()

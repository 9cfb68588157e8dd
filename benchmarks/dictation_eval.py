#!/usr/bin/env python
"""Dictation benchmark: ``spoken_punctuation=True`` through the public pipeline on a dictation set.

    python benchmarks/dictation_eval.py --model runs/default_dictation_head/final
    python benchmarks/dictation_eval.py --model MODEL --set benchmarks/data/dictation_dev.txt --show-errors
    python benchmarks/dictation_eval.py --model MODEL --remove-disfluencies   # the two options together
    python benchmarks/dictation_eval.py --model default --set benchmarks/data/dictation_edges.txt --keep-punctuation --remove-disfluencies

The set (default: benchmarks/data/dictation_dev.txt, hand-written, apart from the training data) has one
dictated transcript a line: ``[words]`` are a spoken command, ``{words}`` command words meant as words.
Reported: the share of commands carried out (all of the command's words left out of the text and its
mark or break on the word before it), per command and overall; the share of literal uses kept as words;
the share of every other word kept. With ``--remove-disfluencies`` the set is restored with both options,
and a word left out as disfluent counts as a word lost (or a command missed).

A set may also mark ``<word>``: a filler the speaker said (reported: the share removed, with
``--remove-disfluencies``; a word like any other without), and tag a line ``@edge`` (commands first or
last, said twice, beside fillers, beside marks already written, capitalised by the ASR): then every
figure is also given per edge, with the lines whose text doubles a mark (``::``, ``!!``, ``:,``) and
those whose text does not start with a capital. ``--keep-punctuation`` keeps the marks a line is
written with (benchmarks/data/dictation_edges.txt has such lines).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import hf_punctcase
from hf_punctcase.execution import RUNTIMES
from hf_punctcase.labels import SPOKEN_COMMANDS

DEFAULT_SET = Path(__file__).parent / "data" / "dictation_dev.txt"
_SEGMENT = re.compile(r"\[([^\]]+)\]|\{([^}]+)\}|<([^>]+)>|(\S+)")
_DOUBLED_MARK = re.compile(r"[,.;:!?][,;:!]|[,;:!?]\.")
_COMMAND_OF_PHRASE = {phrase: label for label, phrases in SPOKEN_COMMANDS.items() for phrase in phrases}


def parse_line(line: str) -> tuple[list[str], list[str], list[tuple[int, int, str]]]:
    """A marked-up line: its words, each word's role (COMMAND, LITERAL or WORD) and its commands
    ``(start, end, label)``."""
    words, roles, commands = [], [], []
    for command, literal, filler, word in _SEGMENT.findall(line):
        if command:
            pieces = command.split()
            label = _COMMAND_OF_PHRASE.get(" ".join(pieces).lower())
            if label is None:
                raise ValueError(f"[{command}] is no spoken command: {line!r}")
            commands.append((len(words), len(words) + len(pieces), label))
            words += pieces
            roles += ["COMMAND"] * len(pieces)
        elif literal:
            pieces = literal.split()
            words += pieces
            roles += ["LITERAL"] * len(pieces)
        elif filler:
            pieces = filler.split()
            words += pieces
            roles += ["FILLER"] * len(pieces)
        else:
            words.append(word)
            roles.append("WORD")
    return words, roles, commands


def read_set(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]


def edge_of(line: str) -> tuple[str | None, str]:
    """A line's ``@edge`` tag (None without one) and the line without it."""
    if line.startswith("@"):
        tag, _, rest = line.partition(" ")
        return tag[1:], rest
    return None, line


def score(pipe, lines: list[str], show_errors: bool = False, **options) -> dict:
    """The set's figures, and with ``@edge`` tags the same figures for each edge (``per_edge``); each
    line is restored once."""
    tallies = [(edge_of(line)[0], _tally(pipe, line, show_errors, **options)) for line in lines]
    figures = _figures([tally for _, tally in tallies])
    edges = list(dict.fromkeys(edge for edge, _ in tallies if edge is not None))
    if edges:
        figures["per_edge"] = {edge: _figures([tally for tagged, tally in tallies if tagged == edge]) for edge in edges}
    return figures


def _tally(pipe, line: str, show_errors: bool = False, **options) -> dict[str, Counter]:
    """One line restored and counted: commands said and carried out by label, words of each role and
    those kept, and whether its text doubles a mark or does not start with a capital."""
    carried, said, kept, totals, lines = Counter(), Counter(), Counter(), Counter(), Counter()
    _, line = edge_of(line)
    words, roles, commands = parse_line(line)
    result = pipe(" ".join(words), spoken_punctuation=True, **options)
    entries = result["words"]
    lines["doubling_a_mark"] += bool(_DOUBLED_MARK.search(result["text"]))
    letters = [ch for ch in result["text"] if ch.isalpha()]
    lines["not_starting_with_a_capital"] += bool(letters) and not letters[0].isupper()
    for role, entry in zip(roles, entries):
        if role == "FILLER" and not options.get("remove_disfluencies"):
            role = "WORD"
        if role != "COMMAND":
            totals[role] += 1
            kept[role] += not entry["removed"]
    errors = []
    for start, end, label in commands:
        said[label] += 1
        before = next((j for j in range(start - 1, -1, -1) if not entries[j]["removed"]), None)
        done = all(entries[j]["removed"] for j in range(start, end)) and (
            before is None or label in entries[before].get("dictated", [])
        )
        carried[label] += done
        if not done:
            errors.append(" ".join(words[start:end]))
    lost = [w for w, role, e in zip(words, roles, entries) if role not in ("COMMAND", "FILLER") and e["removed"]]
    if show_errors and (errors or lost):
        print(f"{line}\n  -> {result['text']!r}\n  missed: {errors} lost: {lost}", file=sys.stderr)
    return {"carried": carried, "said": said, "kept": kept, "totals": totals, "lines": lines}


def _figures(tallies: list[dict[str, Counter]]) -> dict:
    """The figures of a set of lines from their tallies (:func:`_tally`)."""
    carried, said, kept, totals, lines = (
        sum((tally[key] for tally in tallies), Counter()) for key in ("carried", "said", "kept", "totals", "lines")
    )
    commands_said = sum(said.values())
    return {
        "commands": commands_said,
        "commands_carried_out": sum(carried.values()) / commands_said if commands_said else None,
        "per_command": {label: {"said": said[label], "carried_out": carried[label] / said[label]} for label in sorted(said)},
        "literal_uses": totals["LITERAL"],
        "literal_uses_kept": kept["LITERAL"] / totals["LITERAL"] if totals["LITERAL"] else None,
        "other_words": totals["WORD"],
        "other_words_kept": kept["WORD"] / totals["WORD"] if totals["WORD"] else None,
        **({"fillers": totals["FILLER"], "fillers_removed": 1 - kept["FILLER"] / totals["FILLER"]} if totals["FILLER"] else {}),
        "lines": len(tallies),
        "lines_doubling_a_mark": lines["doubling_a_mark"],
        "lines_not_starting_with_a_capital": lines["not_starting_with_a_capital"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a checkpoint with a spoken-command head")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--remove-disfluencies", action="store_true", help="restore with remove_disfluencies=True too")
    parser.add_argument("--keep-punctuation", action="store_true", help="restore with keep_punctuation=True too")
    parser.add_argument("--json", type=Path, help="also write the scores here")
    parser.add_argument(
        "--runtime", default="auto", choices=("auto", *RUNTIMES),
        help="what runs the model (auto: as pipeline('punct-case') plans it on this machine)",
    )
    args = parser.parse_args(argv)
    pipe = hf_punctcase.load_pipeline(args.model, runtime=args.runtime)
    options = {"remove_disfluencies": True} if args.remove_disfluencies else {}
    if args.keep_punctuation:
        options["keep_punctuation"] = True
    scores = {
        "model": args.model, "set": str(args.set), **options,
        **score(pipe, read_set(args.set), args.show_errors, **options),
    }
    text = json.dumps(scores, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

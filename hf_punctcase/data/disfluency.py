"""Switchboard disfluency annotation (Meteer et al. 1995) → words with punctuation, casing and
FLUENT/DISFLUENT labels.

Markup: ``{F uh, }`` fillers, ``{D well, }`` discourse markers, ``{E I mean }`` edit terms,
``{C and }`` conjunctions and ``{A ...}`` asides, ``[ reparandum + repair ]`` (brackets nest), ``/``
and ``-/`` slash-unit ends, ``<laughter>`` noises, ``(( word ))`` uncertain words. Disfluent: the
contents of {F}, {D}, {E} and every reparandum; {C}, {A} and repairs are fluent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from ..labels import DISFLUENCY_LABELS, LabeledWords, LabelScheme
_DISFLUENT_BRACES = {"F", "D", "E"}
_TURN = re.compile(r"^([AB])\.(\d+):\s*(.*)$")
_NOISE = re.compile(r"<[^<>]*>")


def parse_meteer(text: str) -> tuple[list[str], list[str]]:
    """Tokens of one stretch of annotated speech with their FLUENT/DISFLUENT labels, markup removed."""
    tokens: list[str] = []
    labels: list[str] = []
    stack: list[str] = []  # "F", "D", "E", "C", "A" for braces; "REPARANDUM" / "REPAIR" for brackets
    for token in _NOISE.sub(" ", text).replace("((", " ").replace("))", " ").split():
        if token.startswith("{") and len(token) == 2:
            stack.append(token[1])
        elif token == "}":
            if stack and stack[-1] not in ("REPARANDUM", "REPAIR"):
                stack.pop()
        elif token == "[":
            stack.append("REPARANDUM")
        elif token == "+":
            if "REPARANDUM" in stack:  # the innermost open reparandum turns into its repair
                stack[len(stack) - 1 - stack[::-1].index("REPARANDUM")] = "REPAIR"
        elif token == "]":
            while stack and stack[-1] not in ("REPARANDUM", "REPAIR"):
                stack.pop()  # a brace left open inside the bracket closes with it
            if stack:
                stack.pop()
        elif token in ("/", "-/", "--", "#"):
            continue
        else:
            disfluent = any(item in _DISFLUENT_BRACES or item == "REPARANDUM" for item in stack)
            tokens.append(token)
            labels.append("DISFLUENT" if disfluent else "FLUENT")
    return tokens, labels


def read_switchboard_calls(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """One ``(doc_id, annotated text)`` per call in the annotated file, its turns joined."""
    calls: list[list[str]] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = _TURN.match(line.strip())
            if match:
                if not calls or match.group(2) == "1":
                    calls.append([])  # a call starts at its first turn
                calls[-1].append(match.group(3))
            elif line.strip() and calls:
                calls[-1][-1] += " " + line.strip()  # a turn wrapped onto the next line
    for number, turns in enumerate(calls):
        yield f"swbd_disfluency/{number:02d}", " ".join(turns)


def read_switchboard_disfluency(
    path: str | os.PathLike, scheme: LabelScheme | None = None
) -> Iterator[tuple[str, LabeledWords, list[str]]]:
    """One ``(doc_id, labelled words, disfluency labels)`` per call in the annotated file."""
    scheme = scheme or LabelScheme()
    for doc_id, text in read_switchboard_calls(path):
        tokens, flags = parse_meteer(text)
        labeled, sources = scheme.parse_tokens(tokens)
        yield doc_id, labeled, [flags[i] for i in sources]

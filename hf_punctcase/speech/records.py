"""The speech loop's output read back: its JSON-line records (:func:`read_records`), and its
utterances joined into passages of running speech (:func:`passages`), as the ASR dev sets and the
``asr_hypotheses`` training data read them. Nothing here runs a recogniser or needs the ``[asr]`` extra.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path


def read_records(path: str | os.PathLike) -> list[dict]:
    """The speech loop's records in ``path`` (none if it does not exist). A last line cut short by a
    crash is left out; a broken line elsewhere raises ``ValueError``."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):  # the unfinished last line of an interrupted run
                break
            raise ValueError(f"{path}:{number}: not a JSON line of the speech loop") from None
    return records


def one_best_kept(record: dict) -> bool:
    """Whether a record's own 1-best hypothesis passed the WER filter (it leads its kept hypotheses)."""
    return bool(record["hypotheses"]) and record["hypotheses"][0] == record["one_best"]


def passages(records: Iterable[dict], recognizer: str | None = None, keep_dropped: bool = False) -> list[dict]:
    """The loop's utterances joined back into running speech, in file order, as the pipeline reads ASR
    output: records of one ``recognizer`` (``None``: the output's only one), each passage a record the
    ``asr_hypotheses`` corpus reads, ``{"id", "reference", "hypotheses": [joined 1-best], "utterances"}``.

    A passage is a run of consecutive utterances of one document whose 1-best hypothesis was kept: an
    utterance whose 1-best was dropped (over ``max_wer``) or a gap in the utterance numbers ends it, so
    no passage holds a hypothesis the filter rejected. With ``keep_dropped`` each document is one
    passage and such an utterance contributes its reference words only (all deleted in the hypothesis),
    as an ASR dev set scores every word."""
    records = list(records)
    names = sorted({record["recognizer"] for record in records})
    if recognizer is None:
        if len(names) > 1:
            raise ValueError(f"the records come from several recognizers {names}: name the one to join")
    elif recognizer not in names:
        raise ValueError(f"no records of recognizer {recognizer!r}; the output has {names}")
    joined: list[dict] = []
    by_document: dict[str, dict] = {}  # keep_dropped: one passage a document, wherever its records lie
    previous: tuple[str, str] | None = None
    for record in records:
        if recognizer is not None and record["recognizer"] != recognizer:
            continue
        document, _, index = record["utterance"].rpartition("/")
        kept = one_best_kept(record)
        if keep_dropped:
            passage = by_document.get(document)
            if passage is None:
                passage = by_document[document] = _new_passage(record["utterance"])
                joined.append(passage)
        elif not kept:
            previous = None
            continue
        else:
            if not (previous is not None and previous[0] == document and _next_index(previous[1]) == index):
                joined.append(_new_passage(record["utterance"]))
            passage = joined[-1]
            previous = (document, index)
        passage["references"].append(record["reference"])
        passage["words"].extend(record["one_best"].split() if kept else [])
        passage["utterances"] += 1
    return [
        {"id": p["id"], "reference": " ".join(p["references"]), "hypotheses": [" ".join(p["words"])], "utterances": p["utterances"]}
        for p in joined
    ]


def _new_passage(utterance_id: str) -> dict:
    return {"id": utterance_id, "references": [], "words": [], "utterances": 0}


def _next_index(index: str) -> str | None:
    """The utterance number after ``index`` (ids are ``{document}/{number}``); None for another form."""
    return str(int(index) + 1) if index.isdigit() else None


__all__ = ["one_best_kept", "passages", "read_records"]

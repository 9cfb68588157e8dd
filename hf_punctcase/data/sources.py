"""Readers for the corpora in ../shared/data, and conversion into labelled training examples.

Each reader yields ``(doc_id, text)`` pairs of punctuated, cased running text; :func:`labeled_chunks`
turns them into examples of at most N words with punctuation and casing label ids.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..labels import LabelScheme, LabeledWords

#: Default location of the shared corpora, relative to a checkout of this repository.
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[3] / "shared" / "data"

# TED stage notes: "(Laughter)", "(Applause)", "(Music)", "[...]", and music symbols.
_TED_STAGE_NOTE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|[♫♪]")
# Speaker tags at the start of a dialogue line: "Doctor:", "Patient:", "Guest_family:".
_SPEAKER_TAG = re.compile(r"^\s*[A-Za-z_ ]{1,30}:\s*", re.M)
# ACI-BENCH speaker tags: "[doctor]", "[patient]", "[patient_guest]".
_ACI_SPEAKER_TAG = re.compile(r"\[[a-z_ ]+\]")


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The corpus folder: ``path`` if given, else ``$HF_PUNCTCASE_DATA`` or ../shared/data."""
    chosen = Path(path or os.environ.get("HF_PUNCTCASE_DATA", DEFAULT_DATA_DIR))
    if not chosen.is_dir():
        raise FileNotFoundError(f"corpus folder {chosen} does not exist; pass --data-dir")
    return chosen


def clean_ted_text(text: str) -> str:
    return _TED_STAGE_NOTE.sub(" ", text)


def read_ted_talks(path: str | os.PathLike, collections: Iterable[str] = ("ted", "teded", "tedx", "ted_archive")):
    """Punctuated TED talks for training: no duplicates, none that overlaps the IWSLT dev/test sets."""
    wanted = set(collections)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            talk = json.loads(line)
            if (
                not talk["punctuated"]
                or talk["duplicate_of"]
                or talk.get("near_duplicate_of")
                or talk["overlaps_iwslt_eval"]
                or talk["collection"] not in wanted
            ):
                continue
            yield f"ted/{talk['collection']}/{talk['title']}", clean_ted_text(talk["text"])


def read_iwslt_cased(paths: Iterable[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """IWSLT cased dev sets (one segment a line): each file is one running document."""
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            yield f"iwslt/{Path(path).stem}", " ".join(line.strip() for line in handle)


def read_swda(path: str | os.PathLike, split: str | None = None, with_split: bool = False):
    """Switchboard conversations (utterances joined in order) as ``(doc_id, text)``, optionally one
    split only; ``with_split`` adds the corpus's split name ("train", "val", "test")."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            conversation = json.loads(line)
            if split is not None and conversation["split"] != split:
                continue
            text = " ".join(u["text"] for u in conversation["utterances"])
            doc_id = f"swda/{conversation['conversation_no']}"
            yield (doc_id, text, conversation["split"]) if with_split else (doc_id, text)


def read_mts_dialog(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """MTS-Dialog doctor–patient dialogues with the speaker tags removed."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            yield f"mts_dialog/{row['ID']}", _SPEAKER_TAG.sub(" ", row["dialogue"])


def read_ted_unpunctuated(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """TEDx / archive talks without human punctuation: unlabelled speech-domain text (for MLM, n-gram LMs)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            talk = json.loads(line)
            if talk["punctuated"] or talk["duplicate_of"] or talk.get("near_duplicate_of"):
                continue
            yield f"ted/{talk['collection']}/{talk['title']}", clean_ted_text(talk["text"])


def read_aci_bench(path: str | os.PathLike, id_column: str | None = None) -> Iterator[tuple[str, str]]:
    """ACI-BENCH dialogues ("[doctor] hi , brian ."): speaker tags removed; spaced marks attach to
    the word before when parsed. The dialogues are lowercase: they give punctuation labels only."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            key = row.get(id_column) if id_column else row.get("encounter_id") or row.get("id")
            yield f"aci_bench/{Path(path).stem}/{key}", _ACI_SPEAKER_TAG.sub(" ", row["dialogue"])


def read_text_files(paths: Iterable[str | os.PathLike], text_field: str = "text") -> Iterator[tuple[str, str]]:
    """The user's own punctuated text: ``.txt`` files (one document each) or ``.jsonl`` (one per line)."""
    for path in paths:
        path = Path(path)
        if path.suffix == ".jsonl":
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle):
                    if line.strip():
                        record = json.loads(line)
                        yield f"{path.stem}/{record.get('id', number)}", record[text_field]
        else:
            yield path.stem, path.read_text(encoding="utf-8")


def labeled_chunks(
    documents: Iterable[tuple[str, str]],
    scheme: LabelScheme,
    chunk_words: int,
    max_words: int | None = None,
    with_casing: bool = True,
) -> Iterator[dict]:
    """Examples of ``chunk_words`` consecutive words with label ids.

    Chunks start anywhere in a sentence, as inference windows do. ``with_casing=False`` marks the
    casing labels as ignored (-100) for sources without reliable casing.
    """
    punct2id, case2id = scheme.punct2id, scheme.case2id
    total = 0
    for doc_id, text in documents:
        labeled: LabeledWords = scheme.parse(text)
        for start in range(0, len(labeled), chunk_words):
            words = labeled.words[start : start + chunk_words]
            if max_words is not None and total >= max_words:
                return
            total += len(words)
            yield {
                "doc_id": doc_id,
                "words": words,
                "punct": [punct2id[p] for p in labeled.punct[start : start + chunk_words]],
                "case": [case2id[c] if with_casing else -100 for c in labeled.case[start : start + chunk_words]],
            }

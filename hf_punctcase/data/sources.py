"""Readers for the corpora in ../shared/data, and conversion into labelled training examples.

Each reader yields ``(doc_id, text)`` pairs of punctuated, cased running text; :func:`labeled_chunks`
turns them into examples of at most N words with punctuation and casing label ids.
"""

from __future__ import annotations

import csv
import json
import lzma
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..labels import MISSING_LABEL, LabelScheme, LabeledWords, is_latin_letter

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
                or not mostly_latin(talk["text"])
            ):
                continue
            yield f"ted/{talk['collection']}/{talk['title']}", clean_ted_text(talk["text"])


def mostly_latin(text: str, threshold: float = 0.5) -> bool:
    """Whether at least ``threshold`` of the letters are Latin: two "punctuated" TED archive talks are
    Korean spam and machine text, not English transcripts."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(map(is_latin_letter, letters)) >= threshold * len(letters)


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
            if (
                talk["punctuated"]
                or talk["duplicate_of"]
                or talk.get("near_duplicate_of")
                or talk.get("overlaps_iwslt_eval")
                or not mostly_latin(talk["text"])
            ):
                continue
            yield f"ted/{talk['collection']}/{talk['title']}", clean_ted_text(talk["text"])


def read_aci_bench(
    path: str | os.PathLike, id_column: str | None = None, punctuated_only: bool = True
) -> Iterator[tuple[str, str]]:
    """ACI-BENCH dialogues ("[doctor] hi , brian ."): speaker tags removed; spaced marks attach to
    the word before when parsed. The dialogues are lowercase: they give punctuation labels only.
    Some dialogues (most of the "aci" subset) carry no punctuation at all; they cannot give labels
    and are skipped unless ``punctuated_only=False``."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if punctuated_only and not re.search(r"\s[,.?]\s", row["dialogue"]):
                continue
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


def read_asr_hypotheses(paths: Iterable[str | os.PathLike]) -> Iterator[tuple[str, str, list[str]]]:
    """The user's ASR output with its reference transcripts: ``.jsonl`` files, one reference a line,
    ``{"id": ..., "reference": "Punctuated, cased text.", "hypotheses": ["asr 1-best", "2-best", ...]}``
    (``"hypothesis": "..."`` for a single one; ``id`` optional). Yields ``(id, reference, hypotheses)``."""
    for path in paths:
        path = Path(path)
        if path.suffix != ".jsonl":
            raise ValueError(f"{path}: ASR hypotheses come as .jsonl lines of reference + hypotheses")
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                record = json.loads(line)
                hypotheses = record.get("hypotheses", [record["hypothesis"]] if "hypothesis" in record else None)
                if "reference" not in record or not isinstance(hypotheses, list):
                    raise ValueError(f'{path}:{number}: needs "reference" and "hypotheses" (a list) or "hypothesis"')
                yield f"{path.stem}/{record.get('id', number)}", record["reference"], hypotheses


def labeled_chunks(
    documents: Iterable[tuple[str, str]],
    scheme: LabelScheme,
    chunk_words: int,
    max_words: int | None = None,
    with_casing: bool = True,
) -> Iterator[dict]:
    """Examples of ``chunk_words`` consecutive words with label ids.

    Chunks start anywhere in a sentence, as inference windows do. ``with_casing=False`` marks the
    casing labels as missing (:data:`~hf_punctcase.labels.MISSING_LABEL`) for sources without reliable casing.
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
                "case": [case2id[c] if with_casing else MISSING_LABEL for c in labeled.case[start : start + chunk_words]],
            }


# ---- conversational and general text ---------------------------------------------------------------
# DailyDialog glues some sentences together ("far.Can"); a mark between a lowercase and an uppercase
# letter starts a new word.
_GLUED_SENTENCE = re.compile(r"(?<=[a-z])([.?!,])(?=[A-Z])")


def read_dailydialog(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """DailyDialog (``dialogues_<split>.txt``): one dialogue a line, turns split by ``__eou__``, marks
    spaced out ("sir ."); spaced marks attach to the word before when parsed."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            text = _GLUED_SENTENCE.sub(r"\1 ", line.replace("__eou__", " "))
            if text.strip():
                yield f"dailydialog/{Path(path).stem}/{number}", text


def read_fortunes(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            record = json.loads(line)
            yield f"fortunes/{record['file']}/{number}", record["text"]


def read_wikipedia(folder: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """Wikipedia sample articles, then the Lee news corpus (one document a line)."""
    folder = Path(folder)
    with open(folder / "enwiki_sample_plaintext.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            yield f"wikipedia/{record['title']}", record["text"]
    lee = folder / "lee_background.cor"
    if lee.is_file():
        for number, line in enumerate(lee.read_text(encoding="utf-8", errors="replace").splitlines()):
            if line.strip():
                yield f"lee/{number}", line


# MTSamples' scrape turned line breaks into commas: "PLAN:,1. She will", "allergies.,  She used".
_LINE_BREAK_COMMA = re.compile(r"([.:?!])\s*,\s*")


def repair_mtsamples(text: str) -> str:
    return _LINE_BREAK_COMMA.sub(r"\1 ", text.strip().lstrip(","))


def read_mtsamples(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """MTSamples reports, repaired, each unique transcription once (the CSV repeats reports under
    several specialties)."""
    seen: set[str] = set()
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            text = row["transcription"].strip()
            if not text or text in seen:
                continue
            seen.add(text)
            yield f"mtsamples/{row['note_id'] if 'note_id' in row else len(seen)}", repair_mtsamples(text)


def read_masc(folder: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """MASC plain text, spoken and written; the MS98 Switchboard files are lowercase and unpunctuated
    and are skipped."""
    for path in sorted(Path(folder).rglob("*.txt")):
        if "ms98" in path.name.lower():
            continue
        yield f"masc/{path.relative_to(folder).with_suffix('')}", path.read_text(encoding="utf-8", errors="replace")


def _brown_detokenised(raw: str) -> str:
    tokens = []
    for tagged in raw.split():
        word = tagged.rsplit("/", 1)[0]
        if word in ("``", "''"):
            continue  # quotes are not labelled
        tokens.append(word)
    return " ".join(tokens)


def read_nltk(folder: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """NLTK corpora: Gutenberg, State of the Union, inaugural, ABC, webtext (one document a file), and
    Brown (``word/TAG`` tokens, detokenised: marks are separate tokens that attach when parsed)."""
    import zipfile

    folder = Path(folder)
    for corpus in ("gutenberg", "state_union", "inaugural", "abc", "webtext"):
        for path in sorted((folder / corpus).glob("*.txt")):
            yield f"nltk/{corpus}/{path.stem}", path.read_text(encoding="utf-8", errors="replace")
    brown = folder / "brown_tagged.zip"
    if brown.is_file():
        with zipfile.ZipFile(brown) as archive:
            for name in sorted(archive.namelist()):
                stem = name.rsplit("/", 1)[-1]
                if re.fullmatch(r"c[a-r]\d\d", stem):
                    yield f"nltk/brown/{stem}", _brown_detokenised(archive.read(name).decode("utf-8", "replace"))


def read_aci_asr_pairs(folder: str | os.PathLike, split: str = "valid") -> Iterator[tuple[str, str, str]]:
    """ACI-BENCH virtscribe encounters as ``(id, asr dialogue, human transcript)``: real ASR errors on
    medical conversations, kept paired for aligned (ASR-mode) evaluation and for training on ASR
    output with labels transferred from the transcript. ``folder`` is ``src_experiment_data``; the
    train split has no ``*_virtscribe_humantrans.csv``, so its transcripts are the same encounters'
    dialogues in ``challenge_data`` (matched through its metadata's ``id``)."""
    folder = Path(folder)
    asr = {row["id"]: row["dialogue"] for row in csv.DictReader(open(folder / f"{split}_virtscribe_asr.csv", newline=""))}
    human_path = folder / f"{split}_virtscribe_humantrans.csv"
    if human_path.is_file():
        human = [(row["id"], row["dialogue"]) for row in csv.DictReader(open(human_path, newline=""))]
    else:
        challenge = folder.parent / "challenge_data"
        ids = {row["encounter_id"]: row["id"] for row in csv.DictReader(open(challenge / f"{split}_metadata.csv", newline=""))}
        rows = csv.DictReader(open(challenge / f"{split}.csv", newline=""))
        human = [(ids.get(row["encounter_id"]), row["dialogue"]) for row in rows]
    for key, dialogue in human:
        if key in asr:
            yield key, _ACI_SPEAKER_TAG.sub(" ", asr[key]), _ACI_SPEAKER_TAG.sub(" ", dialogue)


# ---- the sharded corpora: xz JSONL, one document a line with its ``paragraphs`` ---------------------
#: The folders of ../shared/data whose documents come as ``part-NNNNN.jsonl.xz`` shards.
SHARDED_CORPORA = {
    "changelog": ("spoken", "changelog"),
    "scotus": ("spoken", "scotus"),
    "ungd": ("spoken", "ungd"),
    "wikipedia_2015": ("general", "wikipedia_2015"),
    "gutenberg": ("general", "gutenberg"),
}


def read_shards(folder: str | os.PathLike) -> Iterator[dict]:
    """The documents of a sharded corpus folder, one dict each (``id``, ``paragraphs``, and the corpus's
    own fields such as ``speakers`` or ``date``), streamed shard by shard and line by line in the shards'
    order, so that no more than one document is held at a time."""
    shards = sorted(Path(folder).glob("part-*.jsonl.xz"))
    if not shards:
        raise FileNotFoundError(f"no part-*.jsonl.xz shards in {folder}")
    for shard in shards:
        with lzma.open(shard, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    document = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"{shard}:{number}: not a JSON document ({error.msg})") from None
                if not isinstance(document.get("paragraphs"), list) or "id" not in document:
                    raise ValueError(f'{shard}:{number}: a document needs "id" and "paragraphs" (a list)')
                yield document


def paragraphed_text(document: dict) -> str:
    """A sharded document's text, one paragraph a line. In conversations a paragraph is one speaker's
    turn, so a change of speaker is a paragraph break (the line breaks that the paragraph labels read)."""
    return "\n".join(" ".join(paragraph.split()) for paragraph in document["paragraphs"] if paragraph.strip())

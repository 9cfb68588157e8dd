"""`load_punct_case_dataset`: any supported corpus as a `datasets.DatasetDict` with unified features.

Features: ``doc_id``, ``domain``, ``words`` (list of str), ``punct``, ``case``, ``disfluency`` and
``command`` and ``paragraph`` (ClassLabel sequences from the one label scheme; -1 where a source cannot give a label, e.g.
the casing of lowercase dialogues, so that it is ignored in the loss rather than guessed). ``command``
is WORD for every word of a corpus that nobody dictated; the ``dictation`` source gives spoken commands.
``paragraph`` marks the last word of each paragraph END where a corpus keeps its paragraphs (the TED
talks' transcribers' line breaks), and is unknown elsewhere. Splits are by document
(no document is in two splits): a corpus's own splits where it has them, otherwise a stable hash of
the document id. Documents are chunked into examples of at most ``max_words`` words, cut at sentence
ends where possible, or (``windows=True``, as training uses them) into consecutive windows of
``max_words`` words that start anywhere in a sentence, as inference windows do.

With ``written_forms=True`` a ``written`` column keeps each word as the text wrote it (casing kept,
marks stripped): what the MIXED-case lexicon needs ("iPhone"), which the lowercased ``words`` and the
casing classes no longer say. :func:`hf_punctcase.data.mixed_case_lexicon` reads it, so that training
builds the lexicon without parsing the raw corpora a second time.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import datasets
from datasets.exceptions import DatasetGenerationError

from ..labels import (
    COMMAND_LABELS,
    PARAGRAPH_LABELS,
    DEFAULT_CASE_LABELS,
    DEFAULT_PUNCT_LABELS,
    LEADING_PUNCTUATION,
    MISSING_LABEL,
    LabeledWords,
    LabelScheme,
    split_trailing_marks,
)
from .dictation import dictate
from .disfluency import DISFLUENCY_LABELS, read_switchboard_disfluency
from .disfluency_synthesis import SWDA_FILLERS, inject_disfluencies, overlapping_documents, train_call_statistics
from .formats import read_che
from .label_transfer import AsrHypothesis
from .sources import (
    data_dir,
    read_aci_asr_pairs,
    read_aci_bench,
    read_asr_hypotheses,
    read_dailydialog,
    read_fortunes,
    read_iwslt_cased,
    read_masc,
    read_mts_dialog,
    read_mtsamples,
    read_nltk,
    read_swda,
    SHARDED_CORPORA,
    paragraphed_text,
    read_shards,
    read_ted_talks,
    read_ted_unpunctuated,
    read_text_files,
    read_wikipedia,
)
from .splits import SPLITS, SWITCHBOARD_SPLIT, document_split, sharded_document_id, sharded_split

SENTENCE_END = ("PERIOD", "QUESTION", "EXCLAMATION")


def features_for(scheme: LabelScheme, written_forms: bool = False) -> datasets.Features:
    """The features of :func:`load_punct_case_dataset`'s examples (with the ``written`` column if asked)."""
    features = {
        "doc_id": datasets.Value("string"),
        "domain": datasets.Value("string"),
        "words": datasets.Sequence(datasets.Value("string")),
        "punct": datasets.Sequence(datasets.ClassLabel(names=list(scheme.punct_labels))),
        "case": datasets.Sequence(datasets.ClassLabel(names=list(scheme.case_labels))),
        "disfluency": datasets.Sequence(datasets.ClassLabel(names=list(DISFLUENCY_LABELS))),
        "command": datasets.Sequence(datasets.ClassLabel(names=list(COMMAND_LABELS))),
        "paragraph": datasets.Sequence(datasets.ClassLabel(names=list(PARAGRAPH_LABELS))),
    }
    if written_forms:
        features["written"] = datasets.Sequence(datasets.Value("string"))
    return datasets.Features(features)


FEATURES = features_for(LabelScheme(DEFAULT_PUNCT_LABELS, DEFAULT_CASE_LABELS))


def chunk_at_sentences(labeled: LabeledWords, max_words: int) -> Iterator[tuple[int, int]]:
    """``[start, end)`` spans of at most ``max_words`` words that end at a sentence end where
    possible; a sentence longer than ``max_words`` is cut into pieces."""
    if max_words < 1:
        raise ValueError(f"max_words must be ≥ 1, got {max_words}")
    start = 0
    last_end = None  # end of the last complete sentence inside the current span
    for i, label in enumerate(labeled.punct):
        if i - start + 1 > max_words:
            cut = last_end if last_end is not None else i
            yield start, cut
            start, last_end = cut, None
        if label in SENTENCE_END:
            last_end = i + 1
    if start < len(labeled):
        yield start, len(labeled)


def consecutive_windows(num_words: int, window_words: int) -> Iterator[tuple[int, int]]:
    """``[start, end)`` spans of ``window_words`` words tiling ``num_words`` words (the last one shorter)."""
    if window_words < 1:
        raise ValueError(f"window_words must be ≥ 1, got {window_words}")
    for start in range(0, num_words, window_words):
        yield start, min(start + window_words, num_words)


# ---- sources: each yields (split, doc_id, punctuated text or labelled words, has casing), and may
# add a fifth item, the per-word labels of head tasks: {column: labels} -----------------------------
Source = Callable[[Path, dict], Iterator[tuple]]


#: A source's head labels that say "derive the paragraph column from the text's lines".
PARAGRAPHS_FROM_LINES = {"paragraph": "lines"}


def _ted(root: Path, options: dict):
    for doc_id, text in read_ted_talks(root / "ted" / "talks.jsonl"):
        # The transcribers' paragraphs are the text's lines.
        yield document_split(doc_id, validation=0.0, test=0.05), doc_id, text, True, PARAGRAPHS_FROM_LINES
    iwslt = [root / "iwslt" / "dev2010_cased.txt", root / "iwslt" / "tst2012_cased.txt"]
    for doc_id, text in read_iwslt_cased(iwslt):
        yield "validation", doc_id, text, True


def _iwslt_dev2012(root: Path, options: dict):
    yield "validation", "iwslt/dev2012", read_che(root / "iwslt" / "dev2012_che_labeled.tsv"), False


def _swda(root: Path, options: dict):
    splits = {"train": "train", "val": "validation", "test": "test"}
    for doc_id, text, split in read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", with_split=True):
        yield splits[split], doc_id, text, True


def _mts_dialog(root: Path, options: dict):
    folder = root / "medical" / "mts_dialog"
    for split, file in (("train", "MTS-Dialog-TrainingSet.csv"), ("validation", "MTS-Dialog-ValidationSet.csv")):
        for doc_id, text in read_mts_dialog(folder / file):
            yield split, f"{doc_id}/{split}", text, True


def _aci_bench(root: Path, options: dict):
    folder = root / "medical" / "aci_bench" / "challenge_data"
    for split, file in (("train", "train.csv"), ("validation", "valid.csv")):
        for doc_id, text in read_aci_bench(folder / file):
            yield split, doc_id, text, False  # lowercase dialogues: punctuation labels only


def _aci_bench_asr(root: Path, options: dict):
    # Real ASR output of the virtscribe encounters, its labels transferred from the human transcript.
    folder = root / "medical" / "aci_bench" / "src_experiment_data"
    for split, name in (("train", "train"), ("validation", "valid")):
        for key, asr, human in read_aci_asr_pairs(folder, name):
            yield split, f"aci_bench_asr/{name}/{key}", AsrHypothesis(human, asr), False


def _switchboard_file(root: Path) -> Path:
    return root / "conversational" / "switchboard_disfluency_sample" / "disfluency"


def _switchboard_disfluency(root: Path, options: dict):
    for doc_id, labeled, disfluency in read_switchboard_disfluency(_switchboard_file(root)):
        yield document_split(doc_id, **SWITCHBOARD_SPLIT), doc_id, labeled, True, {"disfluency": disfluency}


def _switchboard_disfluency_synthetic(root: Path, options: dict):
    # TED train talks with disfluencies injected at the rates of the annotated train calls.
    statistics = train_call_statistics(_switchboard_file(root))
    seed, budget = options.get("seed", 0), options.get("synthetic_words", 400_000)
    scheme = LabelScheme()
    for doc_id, text in read_ted_talks(root / "ted" / "talks.jsonl"):
        if budget <= 0:
            break
        if document_split(doc_id, validation=0.0, test=0.05) != "train":
            continue
        labeled = scheme.parse(text)
        rng = random.Random(f"{seed}/{doc_id}")
        injected, disfluency = inject_disfluencies(labeled, rng, statistics)
        budget -= len(injected)
        yield "train", f"synthetic/{doc_id}", injected, True, {"disfluency": disfluency}


def _swda_fillers(root: Path, options: dict):
    # SwDA's written fillers as weak labels; the conversations that are annotated calls are left out,
    # so that no held-out call is trained on.
    scheme = LabelScheme()
    held = [labeled.words for _, labeled, _ in read_switchboard_disfluency(_switchboard_file(root))]
    conversations = [
        (doc_id, scheme.parse(text), split)
        for doc_id, text, split in read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", with_split=True)
    ]
    excluded = overlapping_documents(((doc_id, labeled.words) for doc_id, labeled, _ in conversations), held)
    splits = {"train": "train", "val": "validation", "test": "test"}
    for doc_id, labeled, split in conversations:
        if doc_id not in excluded:
            disfluency = ["DISFLUENT" if word in SWDA_FILLERS else None for word in labeled.words]
            yield splits[split], f"{doc_id}/fillers", labeled, True, {"disfluency": disfluency}


def _dictation(root: Path, options: dict):
    # Dictated transcripts (hf_punctcase.data.dictation) of TED talks, MTSamples reports and MTS-Dialog
    # dialogues in their own splits, about a third of the words from each source; each document is
    # dictated at a rate drawn from DICTATION_RATES, and a share of them spoken with disfluencies.
    seed, budget = options.get("seed", 0), options.get("synthetic_words", 1_500_000)
    scheme = LabelScheme()
    statistics = train_call_statistics(_switchboard_file(root)) if _switchboard_file(root).is_file() else None
    folder = root / "medical" / "mts_dialog"
    sources = (
        ((document_split(d, validation=0.0, test=0.05), d, t) for d, t in read_ted_talks(root / "ted" / "talks.jsonl")),
        ((document_split(d), d, t) for d, t in read_mtsamples(root / "medical" / "mtsamples" / "mtsamples.csv")),
        (
            (split, f"{d}/{split}", t)
            for split, file in (("train", "MTS-Dialog-TrainingSet.csv"), ("validation", "MTS-Dialog-ValidationSet.csv"))
            for d, t in read_mts_dialog(folder / file)
        ),
    )
    for documents in sources:
        left = budget / len(sources)
        for split, doc_id, text in documents:
            if left <= 0:
                break
            labeled, command = dictate(text, scheme, random.Random(f"{seed}/{doc_id}"))
            disfluency = _fluent_around_commands(command)
            rng = random.Random(f"{seed}/{doc_id}/disfluent")
            if statistics is not None and rng.random() < DISFLUENT_DICTATION_SHARE:
                labeled, command, disfluency = _spoken_disfluently(labeled, command, rng, statistics)
            left -= len(labeled)
            yield split, f"dictation/{doc_id}", labeled, True, {"command": command, "disfluency": disfluency}


#: The share of dictated documents spoken with disfluencies (fillers, repetitions, restarts) at the
#: rates of the annotated Switchboard train calls: people who dictate say "um" too.
DISFLUENT_DICTATION_SHARE = 0.3


def _spoken_disfluently(labeled, command: list[str], rng: random.Random, statistics):
    """A dictated transcript with synthetic disfluencies inserted (:func:`inject_disfluencies`): the
    inserted words are DISFLUENT and no command (a restarted "period" is not the one carried out), the
    others are FLUENT, as in the synthetic disfluency corpus, and keep their commands."""
    injected, inserted = inject_disfluencies(labeled, rng, statistics)
    commands = iter(command)
    command = [next(commands) if label == "FLUENT" else "WORD" for label in inserted]
    return injected, command, inserted


def _fluent_around_commands(command: list[str]) -> list[str | None]:
    """Disfluency labels of a dictated transcript: a command's words and the word before each command
    are FLUENT (a speaker dictates a mark after words they mean), the other words unlabelled (the
    written text says nothing of how they were spoken)."""
    labels: list[str | None] = [None] * len(command)
    for i, label in enumerate(command):
        if label != "WORD":
            labels[i] = "FLUENT"
            if i > 0:
                labels[i - 1] = "FLUENT"
    return labels


def _dailydialog(root: Path, options: dict):
    folder = root / "conversational" / "dailydialog" / "extracted"
    for split in ("train", "validation", "test"):
        path = folder / split / f"dialogues_{split}.txt"
        if path.is_file():
            for doc_id, text in read_dailydialog(path):
                yield split, doc_id, text, True


def _hash_split(reader: Callable[[Path], Iterator[tuple[str, str]]], *parts: str) -> Source:
    def source(root: Path, options: dict):
        for doc_id, text in reader(root.joinpath(*parts)):
            yield document_split(doc_id), doc_id, text, True

    return source


def _sharded(name: str) -> Source:
    """A sharded corpus (:data:`~hf_punctcase.data.sources.SHARDED_CORPORA`), streamed from its shards:
    one paragraph a line, so that the paragraph labels end each paragraph (each speaker turn)."""

    def source(root: Path, options: dict):
        for document in read_shards(root.joinpath(*SHARDED_CORPORA[name])):
            text = paragraphed_text(document)
            if text:
                yield sharded_split(name, document), sharded_document_id(name, document), text, True, PARAGRAPHS_FROM_LINES

    return source


def _ted_captions(root: Path, options: dict):
    # Auto-captions carry no human punctuation: their words come without labels (-1), so that only a
    # teacher's soft labels (distillation) or masked-LM objectives learn from them.
    for doc_id, text in read_ted_unpunctuated(root / "ted" / "talks.jsonl"):
        words = [word for word in (LabelScheme().parse(text).words) if word]
        unlabelled = [None] * len(words)
        yield document_split(doc_id), doc_id, LabeledWords(words, unlabelled, list(unlabelled)), False


def _text(root: Path | None, options: dict):
    files = options.get("data_files")
    if not files:
        raise ValueError('the "text" source needs data_files=[...] (.txt or .jsonl files of punctuated text)')
    for doc_id, text in read_text_files(files, options.get("text_field", "text")):
        yield options.get("file_split") or document_split(doc_id), doc_id, text, options.get("has_casing", True)


def _asr_hypotheses(root: Path | None, options: dict):
    # Every hypothesis of one reference lands in the reference's split, so none of its words leaks.
    files = options.get("data_files")
    if not files:
        raise ValueError('the "asr_hypotheses" source needs data_files=[...] (.jsonl lines of reference + hypotheses)')
    for doc_id, reference, hypotheses in read_asr_hypotheses(files):
        split = options.get("file_split") or document_split(doc_id)
        for rank, hypothesis in enumerate(hypotheses):
            yield split, f"{doc_id}/{rank}", AsrHypothesis(reference, hypothesis), options.get("has_casing", True)


#: Sources that read the user's files (``data_files``) rather than a folder of ../shared/data.
#: ``ted_captions_labelled``: the TED auto-captions (``ted_captions``) as a teacher model punctuated and
#: cased them, in recipes/restore_corpus.py's output (a ``text`` field), read as the user's text is.
FILE_SOURCES = ("text", "asr_hypotheses", "ted_captions_labelled")
#: File sources whose labels a model gave: a checkpoint trained on them carries that model's data.
TEACHER_LABELLED_SOURCES = ("ted_captions_labelled",)

#: name → (reader, domain, the splits it can give).
SOURCES: dict[str, tuple[Source, str, tuple[str, ...]]] = {
    "ted": (_ted, "ted", ("train", "validation", "test")),
    "iwslt_dev2012": (_iwslt_dev2012, "ted", ("validation",)),
    "ted_captions": (_ted_captions, "ted", ("train", "validation", "test")),
    "swda": (_swda, "conversational", ("train", "validation", "test")),
    "mts_dialog": (_mts_dialog, "medical", ("train", "validation")),
    "aci_bench": (_aci_bench, "medical", ("train", "validation")),
    "aci_bench_asr": (_aci_bench_asr, "medical", ("train", "validation")),
    "switchboard_disfluency": (_switchboard_disfluency, "conversational", ("train", "validation", "test")),
    "switchboard_disfluency_synthetic": (_switchboard_disfluency_synthetic, "ted", ("train",)),
    "swda_fillers": (_swda_fillers, "conversational", ("train", "validation", "test")),
    "dailydialog": (_dailydialog, "conversational", ("train", "validation", "test")),
    "dictation": (_dictation, "medical", ("train", "validation", "test")),
    "masc": (_hash_split(read_masc, "general", "masc", "plain"), "general", ("train", "validation", "test")),
    "nltk": (_hash_split(read_nltk, "general", "nltk"), "general", ("train", "validation", "test")),
    "wikipedia": (_hash_split(read_wikipedia, "general", "wikipedia_sample"), "general", ("train", "validation", "test")),
    "fortunes": (
        _hash_split(lambda path: read_fortunes(path / "fortunes.jsonl"), "general", "fortunes"),
        "general",
        ("train", "validation", "test"),
    ),
    "mtsamples": (
        _hash_split(lambda path: read_mtsamples(path / "mtsamples.csv"), "medical", "mtsamples"),
        "medical",
        ("train", "validation", "test"),
    ),
    "changelog": (_sharded("changelog"), "conversational", ("train", "validation", "test")),
    "scotus": (_sharded("scotus"), "conversational", ("train", "validation", "test")),
    "ungd": (_sharded("ungd"), "speech", ("train", "validation", "test")),
    "wikipedia_2015": (_sharded("wikipedia_2015"), "general", ("train", "validation", "test")),
    "gutenberg": (_sharded("gutenberg"), "general", ("train", "validation", "test")),
    "text": (_text, "user", ("train", "validation", "test")),
    "ted_captions_labelled": (_text, "ted", ("train", "validation", "test")),
    "asr_hypotheses": (_asr_hypotheses, "user", ("train", "validation", "test")),
}


def load_unlabeled_dataset(name: str = "ted_unpunctuated", data_dir_path: str | os.PathLike | None = None) -> datasets.Dataset:
    """Unlabelled speech-domain text (``doc_id``, ``text``): the TEDx / TED archive talks that have no
    human punctuation (auto-captions). For MLM adaptation and n-gram LMs, not for labels."""
    if name != "ted_unpunctuated":
        raise ValueError(f"unknown unlabelled corpus {name!r}; known: ['ted_unpunctuated']")
    path = data_dir(data_dir_path) / "ted" / "talks.jsonl"
    rows = [{"doc_id": doc_id, "text": text} for doc_id, text in read_ted_unpunctuated(path)]
    return datasets.Dataset.from_list(rows)


def _code_version() -> str:
    """Hash of the code that turns corpora into examples. `datasets` keys its cache on the generator
    and its arguments but not on the readers it calls, so a fixed reader must change the key."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    for path in sorted([*package.joinpath("data").glob("*.py"), package / "labels.py"]):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _written_forms(tokens: Sequence[str], token_of_word: Sequence[int]) -> list[str]:
    """Each word as written: its token's core as :meth:`LabelScheme.parse` cuts it, before lowercasing."""
    return [split_trailing_marks(tokens[index].lstrip(LEADING_PUNCTUATION))[0] for index in token_of_word]


def _paragraph_ends(text: str, token_of_word: Sequence[int]) -> list[str]:
    """Each word's paragraph label where the text's lines are its paragraphs: END for the last word of
    each line (a line's last token may be a lone mark, which belongs to the word before it)."""
    line_ends, count = [], 0
    for line in text.split("\n"):
        count += len(line.split())
        if line.split():
            line_ends.append(count - 1)
    labels = ["INSIDE"] * len(token_of_word)
    word = 0
    for end in line_ends:
        while word + 1 < len(token_of_word) and token_of_word[word + 1] <= end:
            word += 1
        if token_of_word and token_of_word[word] <= end:
            labels[word] = "END"
    return labels


def _examples(
    name: str,
    root: str | None,
    split: str,
    max_words: int,
    punct_labels: tuple,
    case_labels: tuple,
    options: dict,
    code_version: str = "",
    windows: bool = False,
    written_forms: bool = False,
):
    scheme = LabelScheme(tuple(punct_labels), tuple(case_labels))
    reader, domain, _ = SOURCES[name]
    punct2id, case2id = scheme.punct2id, scheme.case2id
    disfluency2id = {label: i for i, label in enumerate(DISFLUENCY_LABELS)}
    command2id = {label: i for i, label in enumerate(COMMAND_LABELS)}
    paragraph2id = {label: i for i, label in enumerate(PARAGRAPH_LABELS)}
    for doc_split, doc_id, document, has_casing, *extra in reader(Path(root) if root else None, options):
        if doc_split != split:
            continue
        written = None
        if isinstance(document, str):
            tokens = document.split()
            labeled, token_of_word = scheme.parse_tokens(tokens)
            if written_forms:
                written = _written_forms(tokens, token_of_word)
        elif isinstance(document, AsrHypothesis):
            labeled = document.labeled(scheme)
        else:
            labeled = document
        if written is None:
            # Pre-labelled words and ASR hypotheses come without a written form: nothing for the lexicon.
            written = [None] * len(labeled)
        heads = extra[0] if extra else {}
        disfluency = [disfluency2id[d] if d is not None else MISSING_LABEL for d in heads.get("disfluency", [None] * len(labeled))]
        command = [command2id[c] for c in heads.get("command", ["WORD"] * len(labeled))]
        paragraph = [MISSING_LABEL] * len(labeled)
        if heads.get("paragraph") == "lines" and isinstance(document, str):
            paragraph = [paragraph2id[p] for p in _paragraph_ends(document, token_of_word)]
        spans = consecutive_windows(len(labeled), max_words) if windows else chunk_at_sentences(labeled, max_words)
        for start, end in spans:
            example = {
                "doc_id": doc_id,
                "domain": options.get("domain") or domain,
                "words": labeled.words[start:end],
                "punct": [punct2id[p] if p is not None else MISSING_LABEL for p in labeled.punct[start:end]],
                "case": [
                    case2id[c] if has_casing and c is not None else MISSING_LABEL for c in labeled.case[start:end]
                ],
                "disfluency": disfluency[start:end],
                "command": command[start:end],
                "paragraph": paragraph[start:end],
            }
            if written_forms:
                example["written"] = written[start:end]
            yield example


def load_punct_case_dataset(
    name: str,
    data_dir_path: str | os.PathLike | None = None,
    max_words: int = 200,
    scheme: LabelScheme | None = None,
    *,
    data_files: Sequence[str | os.PathLike] | None = None,
    text_field: str = "text",
    has_casing: bool = True,
    domain: str | None = None,
    file_split: str | None = None,
    splits: Sequence[str] | None = None,
    windows: bool = False,
    written_forms: bool = False,
) -> datasets.DatasetDict:
    """Load a corpus as a DatasetDict of the splits it has (a split with no document is left out).

    ``name``: one of :data:`SOURCES`. ``data_dir_path``: the corpus folder (default ../shared/data).
    ``max_words``: the most words per example (cut at sentence ends where possible), or with
    ``windows=True`` the words of each consecutive window of a document (the last one shorter).
    ``splits``: only these splits (default: every split the corpus can give).
    ``written_forms``: add the ``written`` column (each word as written, for the MIXED-case lexicon).
    ``domain``: the ``domain`` of every example instead of the corpus's own.

    For the user's files (``"text"``: .txt or .jsonl punctuated text; ``"asr_hypotheses"``: .jsonl
    references with ASR hypotheses; ``"ted_captions_labelled"``: TED auto-captions a teacher punctuated) pass ``data_files=[...]``; ``has_casing=False`` for lowercase text;
    ``text_field``: the .jsonl field holding the text. Their documents go to train/validation/test by a
    stable hash of the document id (about 90/5/5), or all to ``file_split`` (e.g. ``"train"`` when the
    dev set comes from another file).

    Results are cached by `datasets`, keyed on the arguments (and on the user files' size and time).
    """
    if name not in SOURCES:
        raise ValueError(f"unknown corpus {name!r}; known: {sorted(SOURCES)}")
    available = SOURCES[name][2]
    wanted = tuple(splits) if splits is not None else available
    unknown = [split for split in wanted if split not in available]
    if unknown:
        raise ValueError(f"{name} has no {' or '.join(unknown)} split; it can give {list(available)}")
    is_file_source = name in FILE_SOURCES
    if is_file_source and not data_files:
        kind = "reference + hypotheses" if name == "asr_hypotheses" else "punctuated text"
        raise ValueError(f'the "{name}" source needs data_files=[...] (files of {kind})')
    if not is_file_source and (data_files is not None or file_split is not None):
        raise ValueError(f"data_files and file_split are for the user's files ({', '.join(FILE_SOURCES)}), not {name!r}")
    if file_split is not None and file_split not in SPLITS:
        raise ValueError(f"file_split must be one of {list(SPLITS)}, got {file_split!r}")
    if max_words < 1:
        raise ValueError(f"max_words must be ≥ 1, got {max_words}")
    scheme = scheme or LabelScheme()
    root = None if is_file_source else str(data_dir(data_dir_path))
    options: dict = {"text_field": text_field, "has_casing": has_casing, "domain": domain, "file_split": file_split}
    if data_files is not None:
        options["data_files"] = [str(Path(f).resolve()) for f in data_files]
        # User files change: their size and time are part of the cache key.
        options["files_signature"] = [(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in options["data_files"]]
    code_version = _code_version()
    result = {}
    for split in wanted:
        kwargs = {
            "name": name,
            "root": root,
            "split": split,
            "max_words": max_words,
            # Tuples, not lists: `from_generator` splits list-valued gen_kwargs into shards.
            "punct_labels": tuple(scheme.punct_labels),
            "case_labels": tuple(scheme.case_labels),
            "options": options,
            "code_version": code_version,
            "windows": windows,
            "written_forms": written_forms,
        }
        dataset = _generate(kwargs, features_for(scheme, written_forms), split)
        if dataset is not None:
            result[split] = dataset
    return datasets.DatasetDict(result)


def _generate(gen_kwargs: dict, features: datasets.Features, split: str) -> datasets.Dataset | None:
    """One split through `datasets` (read from its cache when it holds it); None for a split with no document.

    `datasets` caches an empty split too, then refuses to read it back: asking it (rather than first
    running the reader to see whether the split has a document) leaves a cached load without any pass
    over the raw corpus."""
    try:
        dataset = datasets.Dataset.from_generator(_examples, features=features, gen_kwargs=gen_kwargs, split=split)
    except DatasetGenerationError as error:
        # The reader's own error (a missing corpus file, a malformed line) says what to fix; the wrapper does not.
        raise (error.__cause__ or error) from None
    except ValueError as error:
        if "corresponds to no data" in str(error):
            return None
        raise
    return dataset if len(dataset) else None


#: name → (what it is, its licence), for model cards: a checkpoint carries its data's restrictions.
LICENCES: dict[str, tuple[str, str]] = {
    "ted": ("TED talks, punctuated (duplicates and IWSLT dev/test talks excluded)", "CC BY-NC-ND 3.0"),
    "iwslt_dev2012": ("IWSLT dev2012 (TED)", "CC BY-NC-ND 3.0"),
    "ted_dev": ("IWSLT dev2010 and tst2012 TED talks (the ted corpus's validation talks)", "CC BY-NC-ND 3.0"),
    "ted_captions": ("TEDx / TED archive auto-captions, no labels (they teach only through a teacher's soft labels)", "CC BY-NC-ND 3.0"),
    "ted_unpunctuated": ("TEDx / TED archive auto-captions, unpunctuated (MLM text)", "CC BY-NC-ND 3.0"),
    "swda": ("Switchboard Dialog Act corpus", "CC BY-NC-SA 3.0"),
    "switchboard_disfluency": ("Switchboard calls with Meteer disfluency markup", "Open Content License"),
    "switchboard_disfluency_synthetic": (
        "TED talks with synthetic disfluencies at the rates of the annotated Switchboard train calls",
        "CC BY-NC-ND 3.0",  # the text is TED's; the calls give only rates and filler frequencies
    ),
    "swda_fillers": ("Switchboard Dialog Act corpus, um/uh as weak disfluency labels (annotated calls excluded)", "CC BY-NC-SA 3.0"),
    "dailydialog": ("DailyDialog written dialogues", "CC BY-NC-SA 4.0"),
    "dictation": (
        "Dictated transcripts made from TED talks, MTSamples reports and MTS-Dialog dialogues (spoken commands)",
        "CC BY-NC-ND 3.0",  # TED's terms, the strictest of the three
    ),
    "masc": ("MASC spoken and written (MS98 excluded)", "research + commercial (MASC terms)"),
    "nltk": ("NLTK corpora: Gutenberg, State of the Union, inaugural, ABC, webtext, Brown", "public domain / not stated"),
    "wikipedia": ("Wikipedia articles + Lee news corpus", "CC BY-SA"),
    "fortunes": ("fortune-cookie quotes (Debian fortunes)", "BSD-style, mixed"),
    "mtsamples": ("MTSamples medical transcription reports", "CC0"),
    "mts_dialog": ("MTS-Dialog doctor–patient dialogues", "CC BY 4.0"),
    "aci_bench": ("ACI-BENCH doctor–patient dialogues (punctuation only)", "CC BY 4.0"),
    "aci_bench_asr": ("ACI-BENCH virtscribe ASR output, labels transferred from the human transcripts", "CC BY 4.0"),
    "changelog": ("Changelog podcast transcripts, edited verbatim (thechangelog/transcripts)", "CC BY-SA 4.0"),
    "scotus": ("US Supreme Court oral arguments since 1990 (Oyez)", "CC BY-NC"),
    "ungd": ("UN General Debate speeches (UN General Debate Corpus)", "CC0"),
    "wikipedia_2015": ("English Wikipedia articles (2015 dump)", "CC BY-SA 3.0"),
    "gutenberg": ("Project Gutenberg public-domain novels and essays", "public domain (US)"),
    "text": ("the user's own text", "as the user's data"),
    "ted_captions_labelled": (
        "TEDx / TED archive auto-captions punctuated and cased by a teacher model (whose training data are listed too)",
        "CC BY-NC-ND 3.0",
    ),
    "asr_hypotheses": ("the user's ASR output, labels transferred from its reference transcripts", "as the user's data"),
}

#: Licences that forbid commercial use.
NON_COMMERCIAL = {"CC BY-NC", "CC BY-NC-ND 3.0", "CC BY-NC-SA 3.0", "CC BY-NC-SA 4.0"}

"""The training data a checkpoint carries, with the licences of each corpus, through everything its
weights come from: its own training stages, the MLM adaptation of its encoder, the teacher it was
distilled from, the model that punctuated text it was trained on (recipes/restore_corpus.py), and the
joint checkpoint it was trained further from.

Licences follow the weights: a checkpoint trained further from another joint checkpoint carries that
checkpoint's training data, read from its training records (``training_summary.json``) or, where it
has none (the embedded models ship without them), from the training-data table of its card.
``base_model`` then names that checkpoint: its Hub id, or for an embedded model, which is not published
on the Hub, :func:`embedded_model_id` (:data:`EMBEDDED_DEFAULT_ID` for the default).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import ModelCard

from ..embedded import EMBEDDED_MODELS, embedded_model_dir
from .card import card_training_data
from .facts import TrainingDataset
from .training_records import mlm_corpora, training_chain, training_record

JOINT_MODEL_TYPE = "joint_token_classification"
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass
class BaseCheckpoint:
    """A joint checkpoint a training run started from, as its card or records describe it."""

    description: str  # in words, for the card
    hub_id: str | None  # the new card's `base_model`
    encoder: str | None  # the base encoder as its card names it
    datasets: list[TrainingDataset]
    metadata_datasets: list[str]
    # Its training as its card states it, if the card has this package's layout: an embedded model's card is
    # replaced with the model, so the card of a checkpoint trained from it must carry that history itself.
    training_time: str | None = None
    recipe_command: str | None = None


def embedded_model_id(name: str) -> str:
    """``base_model`` of a checkpoint trained from the embedded model ``name`` (a key of
    :data:`hf_punctcase.EMBEDDED_MODELS`). The embedded models are not on the Hub, so each is named by
    where it lives: its folder in the ``hf_punctcase`` package."""
    return f"hf_punctcase/{EMBEDDED_MODELS[name].name}"


#: ``base_model`` of a checkpoint trained from the embedded default: ``hf_punctcase/default_model``.
EMBEDDED_DEFAULT_ID = embedded_model_id("default")


def embedded_model_title(name: str) -> str:
    """The embedded model ``name`` in a card's words: "embedded default of hf_punctcase", "embedded
    accurate model of hf_punctcase"."""
    return "embedded default of hf_punctcase" if name == "default" else f"embedded {name} model of hf_punctcase"


def embedded_model_name(model_id: str | None) -> str | None:
    """The embedded model (``"default"``, ``"accurate"``) a ``base_model`` id of :func:`embedded_model_id`
    names, or None for any other id."""
    return next((name for name in EMBEDDED_MODELS if embedded_model_id(name) == model_id), None)


def _joint_checkpoint_card(init: str) -> tuple[Path | None, str | None] | None:
    """(its README.md if it has one, the name of the embedded model it is, if one) of ``init`` if it is a
    joint checkpoint: a local folder, an embedded model's name (``"default"``, ``"accurate"``), or a Hub repo
    id in the local Hub cache (where the run that started from it left it). None for anything else (an
    encoder)."""
    from huggingface_hub import try_to_load_from_cache

    folder = embedded_model_dir(init) or Path(init).expanduser()
    if folder.is_dir():
        config, readme = folder / "config.json", folder / "README.md"
        embedded = next((name for name, path in EMBEDDED_MODELS.items() if folder.resolve() == path.resolve()), None)
    elif _HUB_ID.match(init):
        cached = [try_to_load_from_cache(init, name) for name in ("config.json", "README.md")]
        config, readme = [Path(path) if isinstance(path, str) else None for path in cached]
        embedded = None
    else:
        return None
    if config is None or not config.is_file() or json.loads(config.read_text()).get("model_type") != JOINT_MODEL_TYPE:
        return None
    return (readme if readme is not None and readme.is_file() else None), embedded


def base_checkpoint(init: str | None) -> BaseCheckpoint | None:
    """What a checkpoint trained further from ``init`` inherits from it, if ``init`` is a joint checkpoint
    without training records: the training data and licences its card lists, and its name for
    ``base_model`` (the Hub id; :func:`embedded_model_id` for an embedded model; for a local folder, the
    Hub id its card was written for, else the card's own ``base_model``)."""
    found = _joint_checkpoint_card(str(init)) if init else None
    if found is None:
        return None
    readme, embedded = found
    card = ModelCard.load(readme, ignore_metadata_errors=True) if readme is not None else None
    is_local = Path(str(init)).expanduser().is_dir() or embedded is not None
    if embedded is not None:
        hub_id = embedded_model_id(embedded)
        loads = 'pipeline("punct-case")' if embedded == "default" else f'load_pipeline("{embedded}")'
        description = f"the {embedded_model_title(embedded)} (`{hub_id}`, what `{loads}` loads)"
    elif not is_local:
        hub_id, description = str(init), f"`{init}`"
    else:
        named = card.data.get("model_name") if card is not None else None
        hub_id = named if named and _HUB_ID.match(named) else (card.data.get("base_model") if card is not None else None)
        description = f"a joint checkpoint{f' ({named})' if named else ''}"
    if card is None:
        # Nothing says what it was trained on: the card must not pass that off as no restriction.
        datasets = [TrainingDataset("the base checkpoint's training data (no card or training record found)", None,
                                    "unknown", words_note="–")]
        return BaseCheckpoint(description, hub_id, None, datasets, [])
    encoder, training_time, recipe_command = (
        next((line.removeprefix(prefix) for line in card.text.splitlines() if line.startswith(prefix)), None)
        for prefix in ("- Base encoder: ", "- Time: ", "- Command: ")
    )
    if recipe_command is not None:
        recipe_command = recipe_command.strip("`")
    datasets = card_training_data(card)
    metadata_datasets = card.data.get("datasets") or []
    metadata_datasets = [metadata_datasets] if isinstance(metadata_datasets, str) else list(metadata_datasets)
    if not datasets:  # a card of another layout: its metadata is all there is
        licence = card.data.get("license_name") or card.data.get("license") or "unknown"
        datasets = [TrainingDataset(name, None, licence) for name in metadata_datasets] or [
            TrainingDataset("the base checkpoint's training data", None, licence)
        ]
    for d in datasets:
        d.description = _one_checkpoint_back(d.description)
        d.words_note = "see its card"  # the base checkpoint's training is described on its own card
    return BaseCheckpoint(description, hub_id, encoder, datasets, metadata_datasets, training_time, recipe_command)


_BASE_CHECKPOINT = r"base checkpoint(?: \((\d+) checkpoints back\))?"
_CHECKPOINTS_BACK = re.compile(rf"^((?:{_BASE_CHECKPOINT}(?:, |$))+)(.*)$")


def _one_checkpoint_back(description: str | None) -> str:
    """The description of a base checkpoint's dataset row as seen from the checkpoint trained on it:
    "stage 1" → "base checkpoint, stage 1"; a row already that far back counts the checkpoints
    ("base checkpoint (3 checkpoints back), stage 1") instead of repeating the words."""
    match = _CHECKPOINTS_BACK.match(description or "")
    back, rest = 1, description or ""
    if match:
        back += sum(int(n) if n else 1 for n in re.findall(_BASE_CHECKPOINT, match[1]))
        rest = match[3]
    head = "base checkpoint" if back == 1 else f"base checkpoint ({back} checkpoints back)"
    return head + (f", {rest}" if rest else "")


def corpus_dataset(spec: str, words: int | None) -> TrainingDataset:
    """A corpus spec (NAME, NAME=WEIGHT, text:PATH) as a row of the card's data table, with its licence."""
    from ..data.builder import LICENCES

    source, _, weight = spec.partition("=")
    name, _, files = source.partition(":")  # text:PATH names the user's file
    description, licence = LICENCES.get(name, (name, "unknown"))
    declared = _declared_licences([file for file in files.split(",") if file])
    return TrainingDataset(description, words, declared or licence, f"weight {weight}" if weight else "", name)


def _declared_licences(files: Sequence[str]) -> str | None:
    """The licences of the text that the user's files came from, where every file's provenance record
    lists it (:func:`write_text_provenance`), instead of "as the user's data"; None otherwise."""
    licences = set()
    for file in files:
        rows = (read_provenance(file) or {}).get("text_data")
        if not rows:
            return None
        licences.update(row["licence"] for row in rows)
    return "; ".join(sorted(licences)) or None


def record_datasets(summary: dict) -> list[TrainingDataset]:
    """The corpora a training record says one stage was trained on, with their words and licences."""
    from ..data.asr_noise import ASR_NOISE_POOL

    if "train_corpora" in summary:
        rows = [corpus_dataset(spec, summary["pool_words"].get(spec, 0)) for spec in summary["train_corpora"]]
        # --asr_noise_corpora: pools of their own, recorded as "asr_noise:SPEC"
        for key, words in summary["pool_words"].items():
            if key.startswith(ASR_NOISE_POOL):
                row = corpus_dataset(key[len(ASR_NOISE_POOL):], words)
                row.description = "with simulated ASR errors" + (f", {row.description}" if row.description else "")
                rows.append(row)
        return rows
    # the first recipe's record: words per source
    return [corpus_dataset(name, words) for name, words in summary.get("train_words_by_source", {}).items()]


def mlm_datasets(record: dict) -> list[TrainingDataset]:
    """The text of the MLM adaptation: unlabelled use, but its licences follow the weights all the same."""
    datasets = [corpus_dataset(spec, None) for spec in mlm_corpora(record)]
    for d in datasets:
        d.description = "MLM adaptation" + (f", {d.description}" if d.description else "")
    return datasets


def _lineage_datasets(folder: Path) -> list[TrainingDataset]:
    """Everything a checkpoint folder was trained on: its records' chain of stages, and the card of the
    record-less checkpoint that chain started from."""
    record = training_record(folder)
    if record is None:
        base = base_checkpoint(str(folder))
        return base.datasets if base is not None else []
    chain = training_chain(folder, record)
    base = base_checkpoint(chain[0][1].get("init"))
    return (base.datasets if base is not None else []) + [d for _, stage in chain for d in stage_datasets(stage)]


def stage_datasets(summary: dict) -> list[TrainingDataset]:
    """One stage's corpora, the text its tokenizer was trained on where the stage made a new model on it,
    and the data of the models whose labels it learnt: a distillation teacher's and that of the model
    that restored a corpus file."""
    return record_datasets(summary) + tokenizer_datasets(summary) + teacher_datasets(summary) + restored_text_datasets(summary)


#: The record recipes/train_tokenizer.py leaves in a tokenizer's folder: the text it was trained on.
TOKENIZER_RECORD = "tokenizer_training.json"


def write_tokenizer_record(folder: str | os.PathLike, words_by_spec: dict[str, int], **options: Any) -> Path:
    """Record in a trained tokenizer's folder the corpora it was trained on (spec → words read), with their
    licences as they stand now: a model trained from scratch on the tokenizer carries them (its vocabulary
    is made from that text), which its card lists."""
    from ..atomic_files import atomic_write_text
    from ..version import __version__

    path = Path(folder) / TOKENIZER_RECORD
    record = {
        "training_data": [asdict(corpus_dataset(spec, words)) for spec, words in words_by_spec.items()],
        "hf_punctcase": __version__,
        "options": options,
    }
    atomic_write_text(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def tokenizer_source(tokenizer: str | os.PathLike) -> dict[str, Any]:
    """What a training record says of the tokenizer a new model was made on: its name (a folder's last
    part, so that no machine's path reaches a card) and the rows of its training data, None where the
    folder holds no :data:`TOKENIZER_RECORD` (a Hub tokenizer, or one trained before the record existed)."""
    record_file = Path(tokenizer).expanduser() / TOKENIZER_RECORD
    rows = json.loads(record_file.read_text(encoding="utf-8"))["training_data"] if record_file.is_file() else None
    return {"name": Path(str(tokenizer)).name, "training_data": rows}


def tokenizer_datasets(summary: dict) -> list[TrainingDataset]:
    """The text the tokenizer of a model made from scratch was trained on (the record's ``tokenizer``,
    :func:`tokenizer_source`); a row of unknown licence where that text was not recorded."""
    tokenizer = summary.get("tokenizer")
    if not tokenizer:
        return []
    if tokenizer.get("training_data") is None:
        return [TrainingDataset(
            f"the training text of the tokenizer {tokenizer['name']}", None, "unknown", words_note="not recorded",
        )]
    datasets = []
    for row in tokenizer["training_data"]:
        d = TrainingDataset(**row)
        d.description = "the tokenizer's training text" + (f", {d.description}" if d.description else "")
        datasets.append(d)
    return datasets


def _model_datasets(model: str | Path) -> list[TrainingDataset]:
    """Everything a model named as the pipeline names it was trained on: an embedded model or a local
    checkpoint folder; nothing for a model found nowhere here."""
    folder = embedded_model_dir(model) or Path(model).expanduser()
    return _lineage_datasets(folder) if folder.is_dir() else []


def teacher_datasets(summary: dict) -> list[TrainingDataset]:
    """A distilled student learns from its teacher's training data too: it carries those licences."""
    teacher = (summary.get("distillation") or {}).get("teacher")
    datasets = _model_datasets(teacher) if teacher else []
    for d in datasets:
        d.description = "teacher's data" + (f", {d.description}" if d.description else "")
    return datasets


def restoring_model_training_data(model: str | Path | None) -> list[dict] | None:
    """The rows of a model's training data (None names the default, as the pipeline's); None where they
    are not known (a model found nowhere here, or a folder without a training record or a card that lists
    its data)."""
    return [asdict(d) for d in _model_datasets(model if model is not None else "default")] or None


def provenance_path(corpus: str | os.PathLike) -> Path:
    """Where the record of the model that restored a corpus file lies: ``FILE.provenance.json``."""
    corpus = Path(corpus)
    return corpus.with_name(corpus.name + ".provenance.json")


def write_provenance(corpus: str | os.PathLike, model: str | os.PathLike | None, **options: Any) -> Path:
    """Record next to a restored corpus file which model restored it and the data that model was trained
    on, as they are now: a checkpoint trained on the restored text carries those licences (its card lists
    them), even after the model is replaced."""
    return _write_provenance_record(corpus, options, {
        "model": str(model if model is not None else "default"),
        # None: what it was trained on is not known here (a Hub id whose card is not read)
        "model_training_data": restoring_model_training_data(model),
    })


def write_text_provenance(
    corpus: str | os.PathLike, made_by: str, text_corpora: Sequence[str | TrainingDataset], **options: Any
) -> Path:
    """Record next to a corpus file made from other text (the speech loop's ASR output of a corpus's
    sentences, a script's cleaned copy of a public corpus) what made it and where the text came from: the
    name of a corpus of hf_punctcase.data (``"ted"``, ``"text"``), or a :class:`TrainingDataset` naming an
    outside source and its licence. A checkpoint trained on the file carries those licences, which its card
    lists (in the file's own row too, instead of "as the user's data")."""
    return _write_provenance_record(corpus, options, {
        "made_by": made_by,
        "text_data": [asdict(corpus_dataset(source, None) if isinstance(source, str) else source) for source in text_corpora],
    })


def _write_provenance_record(corpus: str | os.PathLike, options: dict[str, Any], fields: dict[str, Any]) -> Path:
    """``FILE.provenance.json`` next to ``corpus``: ``fields``, the options it was made with and the version."""
    from ..atomic_files import atomic_write_text
    from ..version import __version__

    path = provenance_path(corpus)
    record = {**fields, "hf_punctcase": __version__, "options": options}
    atomic_write_text(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def read_provenance(corpus: str | os.PathLike) -> dict | None:
    """The record :func:`write_provenance` left next to ``corpus``, or None."""
    path = provenance_path(corpus)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def restored_text_datasets(summary: dict) -> list[TrainingDataset]:
    """Text a model punctuated carries that model's training data: each corpus file of the stage with a
    provenance record (``FILE.provenance.json``, written by recipes/restore_corpus.py) adds the data the
    record lists. A teacher-labelled source without a record adds a row of unknown licence."""
    from ..data.builder import TEACHER_LABELLED_SOURCES
    from ..data.mixing import CorpusSpec

    datasets = []
    for spec in summary.get("train_corpora", []):
        try:
            corpus = CorpusSpec.parse(spec)
        except ValueError:  # a corpus an older release knew: its row says so (corpus_dataset)
            continue
        for file in corpus.data_files:
            name = Path(file).name  # a card names no machine's paths
            provenance = read_provenance(file)
            if provenance is not None and "text_data" in provenance:  # made from a corpus's text: its data
                for row in provenance["text_data"]:
                    d = TrainingDataset(**row)
                    d.description = f"{name}: {provenance['made_by']}" + (f", {d.description}" if d.description else "")
                    datasets.append(d)
                continue
            rows = (provenance or {}).get("model_training_data")
            if rows is None:
                if provenance is not None or corpus.name in TEACHER_LABELLED_SOURCES:
                    datasets.append(TrainingDataset(
                        f"the training data of the model that punctuated {name}", None, "unknown",
                        words_note="not recorded",
                    ))
                continue
            for row in rows:
                d = TrainingDataset(**row)
                d.description = f"punctuated {name}: its model's data" + (f", {d.description}" if d.description else "")
                datasets.append(d)
    return datasets

"""What a model name means and whether its folder is whole: one :func:`resolve` for every loader.

:func:`resolve` turns what users pass as ``model`` into a :class:`ResolvedModel`: ``None`` and
``"default"`` name the embedded default model, ``"accurate"``, ``"on-device"`` and ``"open"`` the other embedded
models (:data:`~hf_punctcase.embedded.EMBEDDED_MODELS`), a path a local folder, and anything else a Hub repo
id. A folder is checked once, there, by :func:`check_model_dir`, and its format
(:mod:`hf_punctcase.formats`: torch weights, an ONNX export) found; the pipeline, transformers'
``pipeline()``, the torch-free runtime, the stream, the command line, the demo, export, quantization
and the Hub upload all load through it, and none checks a folder again.

:func:`check_model_dir` reads a folder's config, tokenizer and (through its format) weights without
loading a model and raises one error naming the folder and the fault: a missing file
(``FileNotFoundError``) or a file that is there but unusable (:class:`CheckpointError`, a
``ValueError``). Torch-free: the on-device runtime uses it without torch or transformers.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .embedded import embedded_model_dir
from .faults import CheckpointError, one_line
from .faults import checkpoint_fault as fault
from .formats import FORMATS, format_of
from .labels import LabelScheme
from .tasks import PUNCTUATION, CASING, tasks_of

#: Files every folder has, whatever its format.
REQUIRED_FILES = ("config.json", "tokenizer_config.json")
#: A tokenizer with fewer tokens than this has no real vocabulary: one built from tokenizer_config.json
#: alone holds only its special tokens (5 for BERT), and every word of a transcript becomes unknown.
MIN_VOCABULARY = 32


@dataclass(frozen=True)
class ResolvedModel:
    """A model as :func:`resolve` found it.

    Attributes:
        given: what the caller passed (None for the default).
        location: the folder (checked) or the Hub repo id, as a string for ``from_pretrained``.
        source: ``"embedded"``, ``"folder"`` or ``"hub"``.
        format: the folder's format (:class:`~hf_punctcase.formats.ModelFormat`); None for a Hub id,
            whose files are not here yet.
    """

    given: Any
    location: str
    source: Literal["embedded", "folder", "hub"]
    format: Any = None

    @property
    def folder(self) -> Path | None:
        """The local folder, or None for a Hub repo id."""
        return None if self.source == "hub" else Path(self.location)

    @property
    def runtime(self) -> str | None:
        """The runtime that runs the folder's format (None for a Hub repo id: transformers loads it)."""
        return None if self.format is None else self.format.runtime


def resolve(
    model: str | os.PathLike | ResolvedModel | None, trust_remote_code: bool = False, *, local_only: bool = False
) -> ResolvedModel:
    """What ``model`` names (module docstring), with a local folder checked (:func:`checked_format`).
    ``local_only``: a name that is not an embedded model's is a local folder, never a Hub repo id (for
    commands that write from a folder). A :class:`ResolvedModel` is returned as it is: a loader handed
    one does not check again."""
    if isinstance(model, ResolvedModel):
        return model
    embedded = embedded_model_dir(model)
    if embedded is not None:
        return ResolvedModel(model, str(embedded), "embedded", checked_format(embedded))
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            f"model must be a checkpoint folder, a Hub repo id or an embedded model name, not {type(model).__name__}"
        )
    if local_only or looks_local(str(model)):
        folder = Path(model).expanduser()
        return ResolvedModel(model, str(folder), "folder", checked_format(folder, trust_remote_code=trust_remote_code))
    return ResolvedModel(model, str(model), "hub")


def looks_local(model: str) -> bool:
    """A filesystem path rather than a Hub repo id ("org/name")."""
    return Path(model).expanduser().exists() or model.startswith((".", "/", "~")) or model.count("/") > 1


def check_model_dir(path: str | os.PathLike, trust_remote_code: bool = False) -> str:
    """``str(path)`` if it holds a usable checkpoint, else an error naming the path and the fault
    (:func:`checked_format`, which also says the folder's format)."""
    checked_format(path, trust_remote_code=trust_remote_code)
    return str(path)


def checked_format(path: str | os.PathLike, trust_remote_code: bool = False):
    """The format (:class:`~hf_punctcase.formats.ModelFormat`) of the checkpoint in ``path`` if the
    folder is whole, else an error naming the path and the fault.

    Checked without loading the model: the folder and its files exist (``FileNotFoundError``);
    config.json parses and has the label maps ``punct_labels`` and ``case_labels`` (a missing one would
    silently become the default labels); the tokenizer has a vocabulary (tokenizer.json, vocab.txt,
    vocab.json or a sentencepiece model) of at least :data:`MIN_VOCABULARY` tokens, that the tokenizers
    library reads and that holds its unknown token; tokenizer_config.json is a JSON object; the format's
    own files pass its check (torch weights: safetensors or a weights-only pickle that open, heads with
    one row per label, a model type of this library unless ``trust_remote_code``, and for this library's
    models config fields of the declared types and every tensor of the model config.json describes in
    the weights, of the same shape, and no other; an ONNX export: a ``model.onnx`` whose protobuf is
    whole). Everything else is a :class:`CheckpointError`.
    """
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"model path {folder} does not exist")
    if not folder.is_dir():
        raise FileNotFoundError(f"model path {folder} is not a folder (expected a saved checkpoint folder)")
    # A folder whose files have not changed since it passed is not read again (the library's entry
    # points check it, then transformers' loading reaches the auto class, which asks again).
    key = (str(folder.resolve()), bool(trust_remote_code))
    stamps = _file_stamps(folder)
    passed = _PASSED.get(key)
    if passed is not None and passed[0] == stamps:
        return passed[1]
    _PASSED.pop(key, None)  # a folder changed since is checked again, and only its newest state kept
    # What a library warns of while the files are read (torch on an old pickle protocol) is said again
    # for a folder that passes; for one that fails, the one-line error says what matters.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model_format = _checked_format(folder, trust_remote_code)
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno, source=warning.source)
    _PASSED[key] = (stamps, model_format)
    return model_format


#: Folders that passed :func:`checked_format` in this process: by folder and trust_remote_code, the
#: names, sizes and times of its files when it passed, and its format.
_PASSED: dict[tuple[str, bool], tuple[list, object]] = {}


def _file_stamps(folder: Path) -> list[tuple[str, int, int]]:
    stamps = []
    for file in sorted(folder.iterdir()):
        status = file.stat()
        stamps.append((file.name, status.st_size, status.st_mtime_ns))
    return stamps


def _checked_format(folder: Path, trust_remote_code: bool):
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    model_format = format_of(folder)
    if model_format is None:
        missing.append(" or ".join(f"{fmt.files} ({fmt.description})" for fmt in FORMATS))
    if missing:
        raise FileNotFoundError(f"model path {folder} lacks {', '.join(missing)}")
    config = read_config(folder)
    labels = _check_labels(folder, config)
    model_format.check(folder, config, labels, trust_remote_code)
    # transformers reads a tokenizer_config.json that is not an object as no tokenizer at all, and
    # the pipeline fails later on None.
    read_config(folder, "tokenizer_config.json")
    _check_tokenizer(folder)
    return model_format


def read_config(folder: Path, name: str = "config.json") -> dict[str, Any]:
    """A folder's config.json (or another JSON file ``name``) as a dict, or a :class:`CheckpointError`."""
    try:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise fault(folder, f"{name} is not valid JSON ({one_line(error)})") from None
    if not isinstance(data, dict):
        raise fault(folder, f"{name} does not hold a JSON object (it holds a {type(data).__name__})")
    return data


def _check_labels(folder: Path, config: dict[str, Any]) -> dict[str, list[str]]:
    """The label names of each task the config gives the model (:func:`~hf_punctcase.tasks.tasks_of`), by
    task name, checked."""
    labels = {}
    for task in tasks_of(config):
        key = task.config_field
        if key not in config:
            raise fault(folder, f"config.json has no {key} (its label map); without it the default labels would be used")
        value = config[key]
        if not isinstance(value, list) or not value or not all(isinstance(label, str) for label in value):
            raise fault(folder, f"config.json {key} must be a non-empty list of label names, got {value!r}")
        labels[task.name] = value
    try:
        LabelScheme(tuple(labels[PUNCTUATION.name]), tuple(labels[CASING.name]))
        for task in tasks_of(config):
            if not task.required:
                task.check_labels(labels[task.name])
                task.threshold_in(config)
    except ValueError as error:
        raise fault(folder, f"config.json {one_line(error)}") from None
    # id2label names the logits for standard tooling; one that disagrees with punct_labels would be
    # silently replaced on load.
    id2label = config.get("id2label")
    if isinstance(id2label, dict) and id2label:
        try:
            named = [id2label[str(i)] for i in range(len(id2label))]
        except KeyError:
            named = None
        if named != labels[PUNCTUATION.name]:
            raise fault(folder, f"config.json id2label {id2label} disagrees with punct_labels {labels[PUNCTUATION.name]}")
    return labels


def _check_tokenizer(folder: Path) -> None:
    """The tokenizer must bring its vocabulary: a folder without one loads a tokenizer of special
    tokens only, and every word of a transcript becomes unknown."""
    for name, count in (
        ("tokenizer.json", _tokenizer_json_size),
        ("vocab.txt", _vocab_txt_size),
        ("vocab.json", _vocab_json_size),
    ):
        file = folder / name
        if file.is_file():
            size = count(folder, file)
            if size < MIN_VOCABULARY:
                raise fault(folder, f"{name} holds {size} tokens, not a vocabulary (at least {MIN_VOCABULARY} expected)")
            return
    for file in sorted(folder.glob("*.model")):  # sentencepiece: binary, its size is the check
        if file.stat().st_size > 0:
            return
    raise FileNotFoundError(
        f"model path {folder} lacks a tokenizer vocabulary (tokenizer.json or vocab.txt); "
        "without one every word would be unknown"
    )


def _tokenizer_json_size(folder: Path, file: Path) -> int:
    """The vocabulary size of a tokenizer.json that the ``tokenizers`` library reads (every runtime
    tokenizes with it), and whose unknown token is in its vocabulary."""
    text = ""
    try:
        text = file.read_text(encoding="utf-8")
        data = json.loads(text)
        vocab = data["model"]["vocab"]
    except (ValueError, UnicodeDecodeError) as error:
        raise fault(folder, f"{file.name} is not valid JSON ({one_line(error)})") from None
    except (KeyError, TypeError):
        raise fault(folder, f"{file.name} has no model vocabulary (model.vocab)") from None
    try:
        from tokenizers import Tokenizer
    except ImportError:  # nothing here could tokenize with it either
        Tokenizer = None
    if Tokenizer is not None:
        try:
            Tokenizer.from_str(text)
        except Exception as error:  # noqa: BLE001 - the Rust library raises plain Exception
            raise fault(folder, f"{file.name} is not a tokenizer the tokenizers library reads ({one_line(error)})") from None
    unknown = data["model"].get("unk_token") if isinstance(data["model"], dict) else None
    if isinstance(unknown, str) and isinstance(vocab, dict) and unknown not in vocab:
        # WordPiece maps every word it cannot split to this token: without it such a word fails to encode.
        raise fault(folder, f"{file.name} names the unknown token {unknown!r} (model.unk_token) but its vocabulary lacks it")
    return len(vocab) if isinstance(vocab, (dict, list)) else 0


def _vocab_txt_size(folder: Path, file: Path) -> int:
    try:
        return sum(1 for line in file.read_text(encoding="utf-8").splitlines() if line.strip())
    except UnicodeDecodeError as error:
        raise fault(folder, f"{file.name} is not UTF-8 text ({one_line(error)})") from None


def _vocab_json_size(folder: Path, file: Path) -> int:
    try:
        vocab = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise fault(folder, f"{file.name} is not valid JSON ({one_line(error)})") from None
    return len(vocab) if isinstance(vocab, dict) else 0


__all__ = [
    "CheckpointError", "MIN_VOCABULARY", "REQUIRED_FILES", "ResolvedModel", "check_model_dir",
    "checked_format", "looks_local", "one_line", "read_config", "resolve",
]

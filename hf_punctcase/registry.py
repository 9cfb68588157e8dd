"""The "punct-case" pipeline task, the embedded default model, and the check that a checkpoint folder
is whole before anything is loaded from it.

:func:`check_model_dir` reads a folder's config, weights and tokenizer files without loading a model
and raises one error naming the folder and the fault: a missing file (``FileNotFoundError``) or a
file that is there but unusable (:class:`CheckpointError`, a ``ValueError``). A folder exported to ONNX
(``model.onnx`` and no torch weights: :func:`is_onnx_dir`) is checked the same way, and
``pipeline("punct-case", model=folder)`` runs it with ONNX Runtime (:func:`onnx_pipeline`). :func:`load_pipeline`
and the command line check local folders with it, and so does ``transformers.pipeline("punct-case",
model=folder)`` once the package is imported (:func:`register_pipeline`). Loading never asks whether
to run a folder's own code: ``trust_remote_code`` is passed to transformers explicitly, False unless
the caller sets it.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

from transformers.pipelines import PIPELINE_REGISTRY

from .auto import AutoModelForJointTokenClassification
from .embedded import DEFAULT_MODEL_DIR, embedded_model_dir
from .execution import ONNXRUNTIME, TORCH, ExecutionPlan
from .hardware import plan_execution
from .labels import LabelScheme
from .models import MODEL_FAMILIES
from .pipelines import PunctCasePipeline
from .runtime.onnx_backend import ONNX_MODEL_FILE

TASK = "punct-case"
_REQUIRED_FILES = ("config.json", "tokenizer_config.json")
#: A tokenizer with fewer tokens than this has no real vocabulary: one built from tokenizer_config.json
#: alone holds only its special tokens (5 for BERT), and every word of a transcript becomes unknown.
MIN_VOCABULARY = 32
#: The weights' task heads, by the config field whose labels they predict.
_HEADS = {"punct_labels": "punct_classifier.weight", "case_labels": "case_classifier.weight"}


class CheckpointError(ValueError):
    """A checkpoint folder whose files are there but unusable; the message names the folder and the fault."""


def check_model_dir(path: str | os.PathLike, trust_remote_code: bool = False) -> str:
    """Return ``str(path)`` if it holds a usable checkpoint, else raise an error naming the path and
    the fault.

    Checked without loading the model: the folder and its files exist (``FileNotFoundError``);
    config.json parses, names a model type of this library (any type with ``trust_remote_code``,
    whose folder's code transformers will then run) and has the label maps ``punct_labels`` and
    ``case_labels`` (a missing one would silently become the default labels); the weights open as
    safetensors (not truncated, not empty) and their heads have one row per label; the tokenizer has
    a vocabulary (tokenizer.json, vocab.txt, vocab.json or a sentencepiece model) of at least
    :data:`MIN_VOCABULARY` tokens. Everything else is a :class:`CheckpointError`. An ONNX export
    (:func:`is_onnx_dir`) has ``model.onnx`` (not empty) where a checkpoint has weights; its config and
    tokenizer are checked alike.
    """
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"model path {folder} does not exist")
    if not folder.is_dir():
        raise FileNotFoundError(f"model path {folder} is not a folder (expected a saved checkpoint folder)")
    missing = [name for name in _REQUIRED_FILES if not (folder / name).is_file()]
    weights = _weight_files(folder)
    onnx = not weights and (folder / ONNX_MODEL_FILE).is_file()
    if not weights and not onnx:
        missing.append(f"model weights (model.safetensors, or {ONNX_MODEL_FILE} for an ONNX export)")
    if missing:
        raise FileNotFoundError(f"model path {folder} lacks {', '.join(missing)}")
    config = _read_config(folder)
    ours = _check_model_type(folder, config, trust_remote_code)
    labels = _check_labels(folder, config)
    if onnx:
        if (folder / ONNX_MODEL_FILE).stat().st_size == 0:
            raise _fault(folder, f"{ONNX_MODEL_FILE} is empty (0 bytes)")
    else:
        _check_weights(folder, weights, labels, config, require_heads=ours)
    _check_tokenizer(folder)
    return str(folder)


def is_onnx_dir(path: str | os.PathLike) -> bool:
    """Whether a folder is an ONNX export: it has ``model.onnx`` and no torch weights (a folder with
    both is a torch checkpoint, and the pipeline runs its torch model)."""
    folder = Path(path)
    return folder.is_dir() and (folder / ONNX_MODEL_FILE).is_file() and not _weight_files(folder)


def _fault(folder: Path, message: str) -> CheckpointError:
    return CheckpointError(f"model path {folder}: {message}")


def _weight_files(folder: Path) -> list[Path]:
    """The weight files transformers would load: model.safetensors, the shards an index names, or
    pytorch_model.bin."""
    if (folder / "model.safetensors").is_file():
        return [folder / "model.safetensors"]
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise _fault(folder, f"{index.name} is not a safetensors index ({one_line(error)})") from None
        absent = [name for name in shards if not (folder / name).is_file()]
        if absent:
            raise FileNotFoundError(f"model path {folder} lacks weight shards {', '.join(absent)} named in {index.name}")
        return [folder / name for name in shards]
    if (folder / "pytorch_model.bin").is_file():
        return [folder / "pytorch_model.bin"]
    return []


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise _fault(folder, f"config.json is not valid JSON ({one_line(error)})") from None
    if not isinstance(config, dict):
        raise _fault(folder, "config.json does not hold a JSON object")
    return config


def _check_model_type(folder: Path, config: dict[str, Any], trust_remote_code: bool) -> bool:
    """Whether the config is one of this library's model types; a foreign type is refused unless the
    caller trusts the folder's code, because transformers would run it (or ask on stdin whether to)."""
    model_type = config.get("model_type")
    if model_type in MODEL_FAMILIES:
        return True
    if not trust_remote_code:
        raise _fault(
            folder,
            f"config.json model_type {model_type!r} is not one of this library's ({', '.join(sorted(MODEL_FAMILIES))}); "
            "loading it would run code from the folder: pass trust_remote_code=True (--trust-remote-code) only if you trust it",
        )
    return False


def _check_labels(folder: Path, config: dict[str, Any]) -> dict[str, list[str]]:
    labels = {}
    for key in _HEADS:
        if key not in config:
            raise _fault(folder, f"config.json has no {key} (its label map); without it the default labels would be used")
        value = config[key]
        if not isinstance(value, list) or not value or not all(isinstance(label, str) for label in value):
            raise _fault(folder, f"config.json {key} must be a non-empty list of label names, got {value!r}")
        labels[key] = value
    try:
        LabelScheme(tuple(labels["punct_labels"]), tuple(labels["case_labels"]))
    except ValueError as error:
        raise _fault(folder, f"config.json {one_line(error)}") from None
    # id2label names the logits for standard tooling; one that disagrees with punct_labels would be
    # silently replaced on load.
    id2label = config.get("id2label")
    if isinstance(id2label, dict) and id2label:
        try:
            named = [id2label[str(i)] for i in range(len(id2label))]
        except KeyError:
            named = None
        if named != labels["punct_labels"]:
            raise _fault(folder, f"config.json id2label {id2label} disagrees with punct_labels {labels['punct_labels']}")
    return labels


def _check_weights(
    folder: Path, weights: list[Path], labels: dict[str, list[str]], config: dict[str, Any], require_heads: bool
) -> None:
    shapes: dict[str, list[int]] = {}
    for file in weights:
        if file.stat().st_size == 0:
            raise _fault(folder, f"{file.name} is empty (0 bytes)")
        if file.suffix == ".bin":
            # torch.save writes a zip archive; a truncated one has lost its central directory.
            with open(file, "rb") as handle:
                zipped = handle.read(2) == b"PK"
            if zipped and not zipfile.is_zipfile(file):
                raise _fault(folder, f"{file.name} is truncated or damaged (not a whole zip archive)")
            continue
        shapes.update(_safetensors_shapes(folder, file))
    if not shapes:
        return  # pytorch_model.bin only: shapes are known after loading
    for key, head in _HEADS.items():
        found = [shape for name, shape in shapes.items() if name == head or name.endswith("." + head)]
        if not found:
            if require_heads:
                raise _fault(folder, f"the weights have no {head} (not a punctuation and casing checkpoint?)")
            continue
        if found[0][0] != len(labels[key]):
            raise _fault(
                folder,
                f"config.json has {len(labels[key])} {key} but the weights' {head} has {found[0][0]} rows",
            )
    encoder = config.get("encoder")
    hidden = encoder.get("hidden_size") if isinstance(encoder, dict) else None
    punct = [shape for name, shape in shapes.items() if name.endswith(_HEADS["punct_labels"])]
    if hidden is not None and punct and len(punct[0]) == 2 and punct[0][1] != hidden:
        raise _fault(folder, f"config.json encoder hidden_size {hidden} but the weights' heads take {punct[0][1]}")


def _safetensors_shapes(folder: Path, file: Path) -> dict[str, list[int]]:
    """Tensor shapes from a safetensors header. Opening checks that the header parses and that the
    tensors it lists cover the file exactly, which a truncated or random file fails."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(file), framework="pt") as handle:
            return {name: list(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise _fault(folder, f"{file.name} is truncated or not a safetensors file ({one_line(error)})") from None


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
                raise _fault(folder, f"{name} holds {size} tokens, not a vocabulary (at least {MIN_VOCABULARY} expected)")
            return
    for file in sorted(folder.glob("*.model")):  # sentencepiece: binary, its size is the check
        if file.stat().st_size > 0:
            return
    raise FileNotFoundError(
        f"model path {folder} lacks a tokenizer vocabulary (tokenizer.json or vocab.txt); "
        "without one every word would be unknown"
    )


def _tokenizer_json_size(folder: Path, file: Path) -> int:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        vocab = data["model"]["vocab"]
    except (ValueError, UnicodeDecodeError) as error:
        raise _fault(folder, f"{file.name} is not valid JSON ({one_line(error)})") from None
    except (KeyError, TypeError):
        raise _fault(folder, f"{file.name} has no model vocabulary (model.vocab)") from None
    return len(vocab) if isinstance(vocab, (dict, list)) else 0


def _vocab_txt_size(folder: Path, file: Path) -> int:
    try:
        return sum(1 for line in file.read_text(encoding="utf-8").splitlines() if line.strip())
    except UnicodeDecodeError as error:
        raise _fault(folder, f"{file.name} is not UTF-8 text ({one_line(error)})") from None


def _vocab_json_size(folder: Path, file: Path) -> int:
    try:
        vocab = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise _fault(folder, f"{file.name} is not valid JSON ({one_line(error)})") from None
    return len(vocab) if isinstance(vocab, dict) else 0


def one_line(message: object) -> str:
    """A message (or an exception's) on one line: every run of whitespace, newlines included, one space."""
    return " ".join(str(message).split())


def resolve_model(name_or_path: str | os.PathLike | None, trust_remote_code: bool = False) -> str:
    """A checkpoint named as users name it: None or ``"default"`` is the embedded default model,
    ``"on-device"`` the embedded on-device model (:data:`~hf_punctcase.embedded.EMBEDDED_MODELS`); a local
    folder is checked (:func:`check_model_dir`); anything else is a Hub repo id, returned as it is."""
    embedded = embedded_model_dir(name_or_path)
    if embedded is not None:
        return check_model_dir(embedded)
    if _looks_local(str(name_or_path)):
        return check_model_dir(Path(name_or_path).expanduser(), trust_remote_code=trust_remote_code)
    return str(name_or_path)


def default_model_path() -> str:
    """Path of the embedded default model, checked for completeness."""
    return check_model_dir(DEFAULT_MODEL_DIR)


def _looks_local(model: str) -> bool:
    """A filesystem path rather than a Hub repo id ("org/name")."""
    return Path(model).expanduser().exists() or model.startswith((".", "/", "~")) or model.count("/") > 1


def load_pipeline(
    model: str | os.PathLike | None = None, *, trust_remote_code: bool = False, **kwargs: Any
) -> PunctCasePipeline:
    """``pipeline("punct-case", model=...)`` with a checked checkpoint and no prompt.

    ``model`` is a local checkpoint folder (checked by :func:`check_model_dir`), a Hub repo id, or
    None / ``"default"`` for the embedded default. ``trust_remote_code`` is passed to transformers as
    given (False by default), so that code from a model folder runs only when asked for and
    transformers never asks on stdin. Other keyword arguments go to ``pipeline()``.
    """
    arguments = {"model": resolve_model(model, trust_remote_code=trust_remote_code), **kwargs}
    plan = _apply_plan(arguments)
    if is_onnx_dir(arguments["model"]):
        pipe = onnx_pipeline(arguments.pop("model"), **arguments)
    else:
        pipe = _transformers_pipeline()(TASK, trust_remote_code=trust_remote_code, **arguments)
    pipe.execution_plan = plan or pipe.execution_plan
    return pipe


def register_pipeline() -> None:
    """Register the task; ``pipeline("punct-case")`` with no model loads the embedded default.

    ``transformers.pipeline`` is also wrapped (:func:`_checked_pipeline`) so that
    ``pipeline("punct-case", model=folder)`` checks a local folder first and never prompts."""
    _install_checked_pipeline()
    if TASK in PIPELINE_REGISTRY.get_supported_tasks() and PIPELINE_REGISTRY.supported_tasks[TASK]["impl"] is PunctCasePipeline:
        return
    PIPELINE_REGISTRY.register_pipeline(
        TASK,
        pipeline_class=PunctCasePipeline,
        pt_model=AutoModelForJointTokenClassification,
        default={"model": (str(DEFAULT_MODEL_DIR), None)},
        type="text",
    )


def _transformers_pipeline():
    """transformers' own ``pipeline`` function (not the wrapper)."""
    import transformers.pipelines

    current = transformers.pipelines.pipeline
    return getattr(current, "__wrapped__", current) if getattr(current, "_punct_case_checked", False) else current


def _checked_pipeline(original):
    """``original`` (transformers' ``pipeline``), which for the punct-case task first checks a local
    model folder (:func:`check_model_dir`: ``model="/nope"`` is a FileNotFoundError naming the path,
    not transformers' "Repo id must use alphanumeric chars"), passes ``trust_remote_code=False``
    when the caller gave none (transformers would otherwise ask on stdin for a folder whose model type
    it does not know), and runs the model as :func:`~hf_punctcase.hardware.plan_execution` plans when
    no dtype is given. Every other task goes to ``original`` untouched."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def pipeline(*args: Any, **kwargs: Any):
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)  # let transformers report the bad call
        if bound.arguments.get("task") != TASK:
            return original(*args, **kwargs)
        trust = bound.arguments.get("trust_remote_code")
        if trust is None:
            bound.arguments["trust_remote_code"] = trust = False
        embedded = embedded_model_dir(bound.arguments.get("model"))
        if embedded is not None:  # None: the embedded default, without transformers' warning
            bound.arguments["model"] = str(embedded)
        model = bound.arguments.get("model")
        if isinstance(model, (str, os.PathLike)) and _looks_local(str(model)):
            bound.arguments["model"] = check_model_dir(Path(model).expanduser(), trust_remote_code=bool(trust))
        arguments = dict(bound.arguments)
        arguments.pop("task")
        arguments.update(arguments.pop("kwargs", {}))
        plan = _apply_plan(arguments)
        if isinstance(arguments.get("model"), (str, os.PathLike)) and is_onnx_dir(arguments["model"]):
            pipe = onnx_pipeline(arguments.pop("model"), **arguments)
        else:
            if plan is not None and plan.torch_dtype is not None:
                bound.arguments["dtype"] = plan.torch_dtype
            pipe = original(*bound.args, **bound.kwargs)
        if isinstance(pipe, PunctCasePipeline):
            pipe.execution_plan = plan or pipe.execution_plan
        return pipe

    pipeline._punct_case_checked = True
    return pipeline


#: ``pipeline()`` arguments that choose how a torch model is loaded: an ONNX export has nothing to
#: choose there (its tokenizer and graph are in the folder), so they are accepted and unused.
_LOADING_ONLY = (
    "config", "feature_extractor", "framework", "image_processor", "model_kwargs", "pipeline_class", "processor",
    "revision", "token", "trust_remote_code", "use_fast",
)


def onnx_pipeline(
    folder: str | os.PathLike,
    *,
    tokenizer=None,
    device=None,
    dtype=None,
    device_map=None,
    batch_size: int | None = None,
    intra_op_num_threads: int | None = None,
    **kwargs: Any,
) -> PunctCasePipeline:
    """The ``punct-case`` pipeline over a folder exported to ONNX (:func:`is_onnx_dir`): the same
    windows, batching and decoding as for a torch model, with the model run by ONNX Runtime on the CPU
    (:class:`~hf_punctcase.pipelines.backends.OnnxModel`). The folder's tokenizer is loaded unless one
    is given; ``device`` may only name the CPU and ``dtype`` only float32 or "auto" (the graph's
    precision was fixed at export). Other keyword arguments are the pipeline's (``window_words``, ...);
    those that choose how a torch model loads (``trust_remote_code``, ``revision``, ...) are ignored."""
    import torch
    from transformers import AutoTokenizer

    from .pipelines import OnnxModel

    folder = check_model_dir(Path(folder).expanduser())
    if device_map is not None:
        raise ValueError(f"model path {folder} is an ONNX export: it runs on the CPU, without a device_map")
    if device is not None and not (isinstance(device, int) and device < 0) and torch.device(device).type != "cpu":
        raise ValueError(f"model path {folder} is an ONNX export: it runs on the CPU with ONNX Runtime, not on {device}")
    if dtype not in (None, "auto", "float32", torch.float32):
        raise ValueError(f"model path {folder} is an ONNX export: its precision was fixed at export (dtype {dtype} asked)")
    for name in _LOADING_ONLY:
        kwargs.pop(name, None)
    model = OnnxModel(folder, intra_op_num_threads=intra_op_num_threads)
    if tokenizer is None or isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = AutoTokenizer.from_pretrained(tokenizer or folder)
    return PunctCasePipeline(
        model=model, tokenizer=tokenizer, task=TASK, device=torch.device("cpu"), batch_size=batch_size, **kwargs
    )


def _apply_plan(arguments: dict) -> ExecutionPlan | None:
    """Plan how ``pipeline(**arguments)`` runs a model it loads by name (:func:`~hf_punctcase.hardware.plan_execution`)
    and set the arguments to match: the dtype of a torch plan, or the folder of the cached int8 graph
    (:func:`~hf_punctcase.export.cache.int8_graph`) of an ONNX Runtime one. None for a model object or
    a ``device_map``, which are used as they are."""
    model = arguments.get("model")
    if (model is not None and not isinstance(model, (str, os.PathLike))) or arguments.get("device_map") is not None:
        return None
    dtype = arguments.get("dtype")
    plan = plan_execution(model, device=arguments.get("device"), dtype=dtype)
    if plan.runtime == ONNXRUNTIME and not (model is not None and is_onnx_dir(model)):
        from .export.cache import int8_graph

        try:
            arguments["model"] = str(int8_graph(model))
        except (ImportError, OSError) as error:
            fallback = plan_execution(model, device=arguments.get("device"), dtype=dtype, int8_graph=False)
            plan = ExecutionPlan(
                fallback.runtime, fallback.precision, fallback.device,
                f"{fallback.reason} (the int8 graph could not be built: {one_line(error)})",
            )
    if plan.runtime == TORCH and dtype in (None, "auto"):
        arguments["dtype"] = plan.torch_dtype
    return plan


def _install_checked_pipeline() -> None:
    """Idempotent: put the wrapper where ``from transformers import pipeline`` and
    ``transformers.pipelines.pipeline`` find it (a name imported before this package keeps the
    original, which neither checks nor defaults trust_remote_code)."""
    import transformers.pipelines

    if getattr(transformers.pipelines.pipeline, "_punct_case_checked", False):
        return
    wrapped = _checked_pipeline(transformers.pipelines.pipeline)
    transformers.pipelines.pipeline = wrapped
    # The first import of transformers.pipelines replaces the lazy `transformers` module in
    # sys.modules (see auto.register); set the name on the module that is current.
    setattr(sys.modules["transformers"], "pipeline", wrapped)

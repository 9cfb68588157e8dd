"""The "punct-case" pipeline task and the embedded default model."""

from __future__ import annotations

import os
from pathlib import Path

from transformers.pipelines import PIPELINE_REGISTRY

from .auto import AutoModelForJointTokenClassification
from .pipelines import PunctCasePipeline

TASK = "punct-case"
#: The default checkpoint shipped inside the package (see model_cards/default.md).
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "default_model"
_REQUIRED_FILES = ("config.json", "tokenizer_config.json")


def check_model_dir(path: str | os.PathLike) -> str:
    """Raise a FileNotFoundError naming ``path`` and what it lacks, unless it holds a usable checkpoint."""
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"model path {folder} does not exist")
    if not folder.is_dir():
        raise FileNotFoundError(f"model path {folder} is not a folder (expected a saved checkpoint folder)")
    missing = [name for name in _REQUIRED_FILES if not (folder / name).is_file()]
    if not any(folder.glob("*.safetensors")) and not (folder / "pytorch_model.bin").is_file():
        missing.append("model weights (*.safetensors)")
    if missing:
        raise FileNotFoundError(f"model path {folder} lacks {', '.join(missing)}")
    return str(folder)


def resolve_model(name_or_path: str | os.PathLike | None) -> str:
    """A checkpoint named as users name it: None or ``"default"`` is the embedded default model; a local
    folder is checked (:func:`check_model_dir`); anything else is a Hub repo id, returned as it is."""
    if name_or_path is None or str(name_or_path) == "default":
        return default_model_path()
    if _looks_local(str(name_or_path)):
        return check_model_dir(Path(name_or_path).expanduser())
    return str(name_or_path)


def default_model_path() -> str:
    """Path of the embedded default model, checked for completeness."""
    return check_model_dir(DEFAULT_MODEL_DIR)


def _looks_local(model: str) -> bool:
    """A filesystem path rather than a Hub repo id ("org/name")."""
    return Path(model).expanduser().exists() or model.startswith((".", "/", "~")) or model.count("/") > 1


def load_pipeline(model: str | os.PathLike | None = None, **kwargs) -> PunctCasePipeline:
    """``pipeline("punct-case", model=...)`` with a clear error for a bad local path.

    ``model`` is a local checkpoint folder, a Hub repo id, or None / ``"default"`` for the embedded default.
    """
    from transformers import pipeline

    return pipeline(TASK, model=resolve_model(model), **kwargs)


def register_pipeline() -> None:
    """Register the task; ``pipeline("punct-case")`` with no model loads the embedded default."""
    if TASK in PIPELINE_REGISTRY.get_supported_tasks() and PIPELINE_REGISTRY.supported_tasks[TASK]["impl"] is PunctCasePipeline:
        return
    PIPELINE_REGISTRY.register_pipeline(
        TASK,
        pipeline_class=PunctCasePipeline,
        pt_model=AutoModelForJointTokenClassification,
        default={"model": (str(DEFAULT_MODEL_DIR), None)},
        type="text",
    )

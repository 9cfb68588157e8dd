"""Torch checkpoints: safetensors weights (or pytorch_model.bin), loaded by transformers and run by torch."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from ..faults import checkpoint_fault as fault
from ..faults import one_line
from ..execution import TORCH
from ..tasks import PUNCTUATION, tasks_of
from .base import ModelFormat

#: The weights' task heads, by the config field whose labels they predict.


def weight_files(folder: Path) -> list[Path]:
    """The weight files transformers would load: model.safetensors, the shards an index names, or
    pytorch_model.bin."""
    if (folder / "model.safetensors").is_file():
        return [folder / "model.safetensors"]
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise fault(folder, f"{index.name} is not a safetensors index ({one_line(error)})") from None
        absent = [name for name in shards if not (folder / name).is_file()]
        if absent:
            raise FileNotFoundError(f"model path {folder} lacks weight shards {', '.join(absent)} named in {index.name}")
        return [folder / name for name in shards]
    if (folder / "pytorch_model.bin").is_file():
        return [folder / "pytorch_model.bin"]
    return []


def transformers_pipeline():
    """transformers' own ``pipeline`` function (not the plugin's wrapper, :mod:`hf_punctcase.registry`)."""
    import transformers.pipelines

    current = transformers.pipelines.pipeline
    return getattr(current, "__wrapped__", current) if getattr(current, "_punct_case_checked", False) else current


class TorchFormat(ModelFormat):
    """A checkpoint saved by ``save_pretrained``: weights that transformers loads into a model of one
    of this library's families (or, with ``trust_remote_code``, of the folder's own code)."""

    name = "torch"
    runtime = TORCH
    files = "model weights (model.safetensors)"
    description = "a checkpoint"

    def detect(self, folder: Path) -> bool:
        return bool(weight_files(folder))

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        ours = _check_model_type(folder, config, trust_remote_code)
        _check_weights(folder, weight_files(folder), labels, config, require_heads=ours)

    def load_pipeline(self, folder: str, *, task: str, **pipeline_kwargs: Any):
        pipeline_kwargs.setdefault("trust_remote_code", False)
        return transformers_pipeline()(task, model=folder, **pipeline_kwargs)


def _check_model_type(folder: Path, config: dict[str, Any], trust_remote_code: bool) -> bool:
    """Whether the config is one of this library's model types; a foreign type is refused unless the
    caller trusts the folder's code, because transformers would run it (or ask on stdin whether to)."""
    try:
        from ..models import MODEL_FAMILIES
    except ImportError:  # no torch here: nothing can load a torch checkpoint, let alone run its code
        return True
    model_type = config.get("model_type")
    if model_type in MODEL_FAMILIES:
        return True
    if not trust_remote_code:
        raise fault(
            folder,
            f"config.json model_type {model_type!r} is not one of this library's ({', '.join(sorted(MODEL_FAMILIES))}); "
            "loading it would run code from the folder: pass trust_remote_code=True (--trust-remote-code) only if you trust it",
        )
    return False


def _check_weights(
    folder: Path, weights: list[Path], labels: dict[str, list[str]], config: dict[str, Any], require_heads: bool
) -> None:
    shapes: dict[str, list[int]] = {}
    for file in weights:
        if file.stat().st_size == 0:
            raise fault(folder, f"{file.name} is empty (0 bytes)")
        if file.suffix == ".bin":
            # torch.save writes a zip archive; a truncated one has lost its central directory.
            with open(file, "rb") as handle:
                zipped = handle.read(2) == b"PK"
            if zipped and not zipfile.is_zipfile(file):
                raise fault(folder, f"{file.name} is truncated or damaged (not a whole zip archive)")
            continue
        shapes.update(_safetensors_shapes(folder, file))
    if not shapes:
        return  # pytorch_model.bin only: shapes are known after loading
    for task in tasks_of(config):
        head = task.classifier + ".weight"
        found = [shape for name, shape in shapes.items() if name == head or name.endswith("." + head)]
        if not found:
            if require_heads:
                raise fault(folder, f"the weights have no {head} (not a punctuation and casing checkpoint?)")
            continue
        if found[0][0] != len(labels[task.name]):
            raise fault(
                folder,
                f"config.json has {len(labels[task.name])} {task.config_field} but the weights' {head} has {found[0][0]} rows",
            )
    encoder = config.get("encoder")
    hidden = encoder.get("hidden_size") if isinstance(encoder, dict) else None
    punct = [shape for name, shape in shapes.items() if name.endswith(PUNCTUATION.classifier + ".weight")]
    if hidden is not None and punct and len(punct[0]) == 2 and punct[0][1] != hidden:
        raise fault(folder, f"config.json encoder hidden_size {hidden} but the weights' heads take {punct[0][1]}")


def _safetensors_shapes(folder: Path, file: Path) -> dict[str, list[int]]:
    """Tensor shapes from a safetensors header. Opening checks that the header parses and that the
    tensors it lists cover the file exactly, which a truncated or random file fails."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(file), framework="numpy") as handle:
            return {name: list(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise fault(folder, f"{file.name} is truncated or not a safetensors file ({one_line(error)})") from None


__all__ = ["TorchFormat", "transformers_pipeline", "weight_files"]

"""Torch checkpoints: safetensors weights (or pytorch_model.bin), loaded by transformers and run by torch."""

from __future__ import annotations

import json
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

from ..faults import checkpoint_fault as fault
from ..faults import one_line
from ..execution import TORCH
from ..tasks import PUNCTUATION, tasks_of
from .base import ModelFormat

#: How many tensor names a fault lists before it says how many more there are.
NAMES_SHOWN = 6
#: A numbered layer in a tensor name: ``encoder.layer.3.`` (a ModuleList) or ``weight_ih_l3`` (an LSTM).
NUMBERED_LAYER = re.compile(r"^(.*?)(?:\.(\d+)\.|_l(\d+)(?:_reverse)?$)")
#: A config field that counts layers (``num_hidden_layers``, ``num_encoder_layers``, ``num_cnn_layers``).
LAYER_COUNT_FIELD = re.compile(r"^num_\w*layers$")
#: Tensors torchao's int8 weight-only quantization stores for a ``weight``: the int8 data (the weight's
#: shape) and its scales.
QUANTIZED_WEIGHT = re.compile(r"\._weight_(qdata|scale|zero_point)$")


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
        shapes = _check_weights(folder, weight_files(folder), labels, config, require_heads=ours)
        if ours and shapes:
            _check_config_fits_weights(folder, config, shapes)


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
) -> dict[str, list[int]]:
    """The weights' tensor shapes by name, with the task heads checked against the labels (empty where
    they cannot be read here: pytorch_model.bin without torch)."""
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
            shapes.update(_pickled_shapes(folder, file))
            continue
        shapes.update(_safetensors_shapes(folder, file))
    if not shapes:
        return shapes  # pytorch_model.bin without torch: nothing here could load it either
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
    return shapes


def _safetensors_shapes(folder: Path, file: Path) -> dict[str, list[int]]:
    """Tensor shapes from a safetensors header. Opening checks that the header parses and that the
    tensors it lists cover the file exactly, which a truncated or random file fails."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(file), framework="numpy") as handle:
            return {name: list(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise fault(folder, f"{file.name} is truncated or not a safetensors file ({one_line(error)})") from None


def _pickled_shapes(folder: Path, file: Path) -> dict[str, list[int]]:
    """Tensor shapes of a pytorch_model.bin, read as transformers would (``weights_only``: a pickle
    that holds anything but tensors is refused, and none of its code runs), onto the meta device so
    that nothing is allocated. Empty without torch."""
    try:
        import torch
    except ImportError:
        return {}
    try:
        state = torch.load(file, map_location="meta", weights_only=True, mmap=zipfile.is_zipfile(file))
    except pickle.UnpicklingError as error:
        # weights_only's refusal runs to a dozen lines of advice; one sentence of them says what it found.
        found = re.search(r"WeightsUnpickler error: ([^\n]+?\.)(?:\s|$)", str(error))
        if found:
            raise fault(
                folder, f"{file.name} holds more than weights, so it was not loaded and none of its code ran ({found.group(1)})"
            ) from None
        raise fault(folder, f"{file.name} is not a PyTorch weights file (torch.load cannot unpickle it)") from None
    except Exception as error:  # noqa: BLE001 - torch.load raises index, runtime and OS errors on a foreign file
        raise fault(folder, f"{file.name} is not a PyTorch weights file ({type(error).__name__}: {_short(error)})") from None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise fault(folder, f"{file.name} does not hold a dict of tensors (a state dict)")
    return {name: list(tensor.shape) for name, tensor in state.items()}


def _check_config_fits_weights(folder: Path, config: dict[str, Any], shapes: dict[str, list[int]]) -> None:
    """The model config.json describes must be the one the weights were saved from: every tensor of
    the model in the weights and of the same shape, and no other. Built on the meta device (nothing
    allocated) after a cheap check of the layer counts, since a config asking for 10,000 layers takes
    minutes to build even there. Without this, transformers initialises what is missing or mismatched
    at random and the model answers with confident garbage."""
    _check_layer_counts(folder, config, shapes)
    expected = _expected_shapes(folder, config)
    if "quantization_config" in config:
        # int8 weights are stored as their data (the weight's shape) and scales.
        shapes = {
            QUANTIZED_WEIGHT.sub(".weight", name): shape for name, shape in shapes.items()
            if not QUANTIZED_WEIGHT.search(name) or name.endswith("._weight_qdata")
        }
    missing = [name for name in expected if name not in shapes]
    unexpected = [name for name in shapes if name not in expected]
    if missing or unexpected:
        parts = [f"{label} {_names(names)}" for label, names in (("lack", missing), ("have extra", unexpected)) if names]
        raise fault(folder, f"the weights do not fit the model config.json describes: they {'; they '.join(parts)}")
    for name, shape in expected.items():
        if list(shapes[name]) != list(shape):
            raise fault(folder, f"config.json makes {name} {_shape(shape)} but the weights' is {_shape(shapes[name])}")


def _check_layer_counts(folder: Path, config: dict[str, Any], shapes: dict[str, list[int]]) -> None:
    """No layer-count field of the config (``encoder.num_hidden_layers``, ``num_cnn_layers``, ...) may
    ask for more layers than the weights' largest run of numbered layers holds."""
    layers: dict[str, set[int]] = {}
    for name in shapes:
        match = NUMBERED_LAYER.match(QUANTIZED_WEIGHT.sub(".weight", name))
        if match:
            layers.setdefault(match.group(1), set()).add(int(match.group(2) or match.group(3)))
    most = max(layers.items(), key=lambda item: len(item[1]), default=("", set()))
    for field, count in _layer_count_fields(config):
        if count > len(most[1]):
            held = f"{len(most[1])} layers ({most[0]}.0-{max(most[1])})" if most[1] else "no numbered layers"
            raise fault(folder, f"config.json {field} is {count} but the weights hold {held}")


def _layer_count_fields(config: dict[str, Any], prefix: str = "") -> list[tuple[str, int]]:
    """``(field path, count)`` of every integer layer-count field in config.json, sub-configs included."""
    found = []
    for key, value in config.items():
        if isinstance(value, dict):
            found += _layer_count_fields(value, f"{prefix}{key} ")
        elif LAYER_COUNT_FIELD.match(key) and isinstance(value, int) and not isinstance(value, bool):
            found.append((f"{prefix}{key}", value))
    return found


def _expected_shapes(folder: Path, config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The shape of every tensor the model of ``config`` saves, from the model built on the meta device;
    a config that does not build is a fault naming the field."""
    import torch

    from ..models import family_of

    family = family_of(config.get("model_type"))
    model_config = _model_config(folder, family.config_class, config)
    _check_activations(folder, model_config)
    _check_head_counts(folder, config)
    try:
        with torch.device("meta"):
            model = family.model_class(model_config)
    except Exception as error:  # noqa: BLE001 - any fault of the config's values surfaces as the model builds
        raise fault(folder, f"config.json does not describe a model that can be built ({type(error).__name__}: {_short(error)})") from None
    # Tied weights are saved once, under their source's name.
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    return {name: tuple(tensor.shape) for name, tensor in model.state_dict().items() if name not in tied}


def _model_config(folder: Path, config_class: type, config: dict[str, Any]):
    """The family's config object from config.json, each of the family's own fields of the type its
    config class declares (transformers checks only the fields it declares itself)."""
    import dataclasses
    import inspect

    from huggingface_hub.dataclasses import type_validator

    library = __package__.split(".")[0]
    hints = {
        name: hint for cls in reversed(config_class.__mro__) if cls.__module__.startswith(library)
        for name, hint in inspect.get_annotations(cls, eval_str=True).items()
    }
    for field in dataclasses.fields(config_class):
        if field.name in config and field.name in hints:
            try:
                type_validator(field.name, config[field.name], hints[field.name])
            except (TypeError, ValueError):
                expected = str(hints[field.name]).replace("typing.", "").replace("transformers.configuration_utils.", "")
                raise fault(folder, f"config.json {field.name} must be {expected}, got {config[field.name]!r:.80}") from None
    try:
        return config_class.from_dict(dict(config))
    except Exception as error:  # noqa: BLE001 - the config classes raise ValueError, TypeError and transformers' own
        raise fault(folder, f"config.json {_short(error)}") from None


def _check_activations(folder: Path, model_config) -> None:
    """Every activation the config (or a sub-config) names must be one transformers has."""
    from transformers.activations import ACT2FN

    for path, sub in _sub_configs(model_config):
        for key in ("hidden_act", "activation_function"):
            value = getattr(sub, key, None)
            if isinstance(value, str) and value not in ACT2FN:
                known = ", ".join(name for name in ("gelu", "gelu_new", "relu", "silu", "tanh") if name in ACT2FN)
                raise fault(folder, f"config.json {path}{key} {value!r} is not an activation transformers has ({known}, ...)")


def _check_head_counts(folder: Path, config: dict[str, Any], prefix: str = "") -> None:
    """Attention heads must split the hidden size evenly."""
    heads, hidden = config.get("num_attention_heads"), config.get("hidden_size")
    if isinstance(heads, int) and isinstance(hidden, int) and (heads < 1 or hidden % heads):
        raise fault(folder, f"config.json {prefix}num_attention_heads {heads} does not divide {prefix}hidden_size {hidden}")
    for key, value in config.items():
        if isinstance(value, dict):
            _check_head_counts(folder, value, f"{prefix}{key} ")


def _sub_configs(model_config, prefix: str = ""):
    """``(path, config)`` for a config object and each config nested in it (the encoder's)."""
    from transformers import PreTrainedConfig

    yield prefix, model_config
    for key, value in vars(model_config).items():
        if isinstance(value, PreTrainedConfig):
            yield from _sub_configs(value, f"{prefix}{key} ")


def _short(error: BaseException) -> str:
    """An error's message on one line, cut after 300 characters (a config error can quote a whole
    config)."""
    message = one_line(error)
    return message if len(message) <= 300 else message[:300] + " ..."


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return f"{shown} and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else shown


def _shape(shape) -> str:
    return "[" + ", ".join(str(size) for size in shape) + "]"


__all__ = ["TorchFormat", "weight_files"]

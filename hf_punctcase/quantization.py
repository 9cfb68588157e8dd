"""Compact storage of checkpoints: the encoder's Linear and Embedding weights stored as int8.

:func:`quantize_checkpoint` re-saves a checkpoint through transformers' torchao integration
(``TorchAoConfig``) with torchao's int8 weight-only quantization (``Int8WeightOnlyConfig``, one fp32
scale per row: per output feature of a linear layer, per token of an embedding). The weights file
holds the int8 data and the scales, config.json a ``quantization_config``, and the folder loads like
any checkpoint, with torchao installed: ``pipeline("punct-case", model=folder)``, ``from_pretrained``,
the command line, ``trust_remote_code=True`` without the plugin. Loading turns the weights back into
plain parameters of the dtype the model is loaded in (bf16 or fp32; the model class does it,
``dequantize_stored_weights``), so a model stored this way is about half the size of fp16 on disk and
computes, trains and saves as a float model, up to the rounding of its weights. The task heads (a few
thousand parameters that decide every label), the biases and the LayerNorms keep their precision.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, TorchAoConfig

# Imported lazily below: this module is imported by the package before transformers, so that
# :func:`import_torchao_quietly` runs before transformers imports torchao.

#: Log records that importing torchao writes on every CPU-only install, by logger: its CUDA kernel
#: libraries that cannot load without CUDA, and torch's notice about the enums torchao registers.
_IMPORT_NOISE = {
    "torchao": re.compile(r"Failed to load \S*torchao\S*[/\\]_C\w*\S*\.so\b"),
    "torch.utils._pytree": re.compile(r"is an Enum subclass and is now natively supported by torch\.compile"),
}


class _DropMatching(logging.Filter):
    def __init__(self, pattern: re.Pattern):
        super().__init__()
        self.pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.pattern.search(record.getMessage())


def quiet_torchao_import_noise() -> None:
    """Drop, from now on, the log records that importing torchao writes on every CPU-only install
    (:data:`_IMPORT_NOISE`), whoever imports it (transformers does, wherever torchao is installed);
    any other record of those loggers passes. Imports nothing; idempotent."""
    for name, pattern in _IMPORT_NOISE.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropMatching) and f.pattern is pattern for f in logger.filters):
            logger.addFilter(_DropMatching(pattern))


def import_torchao_quietly() -> None:
    """Import torchao (where transformers would: installed and of a version it supports) without the
    warnings it logs on every CPU-only install (:data:`_IMPORT_NOISE`); any other message it logs
    passes. transformers imports torchao with its model code, so this must run first."""
    if "torchao" in sys.modules:
        return
    from transformers.utils import is_torchao_available

    if not is_torchao_available():
        return  # loading an int8-stored checkpoint then says that torchao is needed
    filters = [(logging.getLogger(name), _DropMatching(pattern)) for name, pattern in _IMPORT_NOISE.items()]
    for logger, drop in filters:
        logger.addFilter(drop)
    try:
        import torchao  # noqa: F401
        import torchao.prototype.safetensors.safetensors_support  # noqa: F401  (what transformers imports)
    finally:
        for logger, drop in filters:
            logger.removeFilter(drop)


def require_torchao(purpose: str) -> None:
    """Import torchao quietly for ``purpose``, or raise ``ImportError`` saying how to install it: writing
    int8 storage and training for it need torchao (the ``quantize`` extra); reading int8 storage does not
    (:func:`hf_punctcase.models.common.modeling.int8_stored_state_dict`)."""
    from transformers.utils import is_torchao_available

    if not is_torchao_available():
        raise ImportError(f"{purpose} needs torchao: pip install 'hf_punctcase[quantize]' (with -c constraints.txt)")
    import_torchao_quietly()


# ---- reading a folder ---------------------------------------------------------------------------


def storage_quantization(path: str | os.PathLike) -> dict[str, Any] | None:
    """The ``quantization_config`` of a checkpoint folder's config.json, or None where its weights are
    stored as plain floats. Raises ``FileNotFoundError`` without a config.json."""
    config_file = Path(path) / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"model path {path} lacks config.json")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"model path {path}: config.json is not valid JSON ({error})") from None
    quantization = config.get("quantization_config") if isinstance(config, dict) else None
    return quantization if isinstance(quantization, dict) and quantization else None


def is_storage_quantized(path: str | os.PathLike) -> bool:
    """Whether a checkpoint folder stores quantized weights (its config.json has a ``quantization_config``)."""
    return storage_quantization(path) is not None


def weights_size(path: str | os.PathLike) -> int:
    """Bytes of a checkpoint folder's weight files (``*.safetensors``, ``*.bin``)."""
    folder = Path(path)
    return sum(file.stat().st_size for pattern in ("*.safetensors", "*.bin") for file in folder.glob(pattern))


# ---- quantizing ---------------------------------------------------------------------------------


def int8_storage_config(model_config: PretrainedConfig) -> TorchAoConfig:
    """The ``transformers.TorchAoConfig`` that stores, for a model of ``model_config``, every Linear
    and Embedding weight of its encoder as int8 (per row), and nothing else.

    torchao's own filter takes Linear layers only, so the weights are named, in one regular expression
    that lists each weight name with its layer index as ``\\d+`` (under a kilobyte in config.json,
    whatever the depth). The heads stay out: they are tiny and decide every label.
    """
    import torch

    require_torchao("int8 storage (hf-punctcase quantize)")
    from torchao.quantization import FqnToConfig, Int8WeightOnlyConfig, PerRow
    from transformers import TorchAoConfig

    from .auto import AutoModelForJointTokenClassification

    with torch.device("meta"):  # the module names, without allocating or initialising weights
        skeleton = AutoModelForJointTokenClassification.from_config(model_config)
    names = sorted({_name_pattern(name) for name in stored_int8_modules(skeleton)})
    pattern = "re:(?:" + "|".join(names) + r")\.weight"
    # version 2 is torchao's Int8Tensor, the format its safetensors support and embedding lookup cover
    # (torchao ≥ 0.18; before 0.18 version 1 was the default). set_inductor_config would change
    # torch.compile's global settings in this process, and nothing here compiles.
    int8 = Int8WeightOnlyConfig(granularity=PerRow(), set_inductor_config=False, version=2)
    return TorchAoConfig(FqnToConfig({pattern: int8}), include_input_output_embeddings=True)


def stored_int8_modules(model: torch.nn.Module) -> list[str]:
    """The names of the modules whose weights int8 storage stores as int8: every Linear and Embedding
    of the encoder (``model.base_model_prefix``) and of the encoder layers a head has of its own (a
    command branch); the heads stay out, they are tiny and decide every label. Raises ``ValueError``
    where the encoder has none."""
    import torch

    prefix = model.base_model_prefix + "."
    names = [
        name
        for name, module in model.named_modules()
        if name.startswith((prefix, "command_branch.")) and isinstance(module, (torch.nn.Linear, torch.nn.Embedding))
    ]
    if not any(name.startswith(prefix) for name in names):
        raise ValueError(f"{type(model).__name__} has no Linear or Embedding layer in its {prefix[:-1]}")
    return names


def _name_pattern(module_name: str) -> str:
    """A module name as a regular expression in which any layer index matches."""
    return r"\.".join(r"\d+" if part.isdigit() else re.escape(part) for part in module_name.split("."))


def quantize_checkpoint(source: str | os.PathLike, target: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write ``source`` to ``target`` with its encoder's Linear and Embedding weights stored as int8.

    ``source`` is a checkpoint folder (checked by :func:`hf_punctcase.checkpoints.resolve`) or
    ``"default"`` for the embedded model. ``target`` gets the weights, config.json (with its
    ``quantization_config``), the code that loads the checkpoint without the plugin, the tokenizer
    and the source's README.md card where it has one. The folder is built beside ``target`` and
    renamed into place only once complete (:func:`hf_punctcase.atomic_files.atomic_directory`): a failure
    leaves no partial folder, and an existing ``target`` is replaced (with ``overwrite=True``; else
    ``FileExistsError``) only at that point. Returns ``target``.
    """
    from .atomic_files import atomic_directory
    from .checkpoints import resolve

    folder = resolve(source, local_only=True).folder
    target = Path(target).expanduser()
    if is_storage_quantized(folder):
        raise ValueError(f"model path {folder} is already stored quantized (config.json has a quantization_config)")
    # Replacing a folder that holds the checkpoint would delete the checkpoint.
    if (target.exists() or target.is_symlink()) and folder.resolve().is_relative_to(target.resolve()):
        raise ValueError(f"output {target} holds the checkpoint itself; write to another folder")
    with atomic_directory(target, overwrite=overwrite) as staging:
        save_quantized(folder, staging)
    return target


def save_quantized(folder: Path, staging: Path) -> None:
    """Write the checkpoint in ``folder`` (plain float weights) into the existing folder ``staging`` with
    int8 weights, its tokenizer and its README.md card; no checks, no atomicity (callers see to them)."""
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from .auto import AutoModelForJointTokenClassification

    config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
    # Quantized from fp32: the scales are computed from the stored values, not from a bf16 rounding.
    model = AutoModelForJointTokenClassification.from_pretrained(
        folder, quantization_config=int8_storage_config(config), dtype=torch.float32, trust_remote_code=False
    )
    model.save_pretrained(staging)
    AutoTokenizer.from_pretrained(folder, trust_remote_code=False).save_pretrained(staging)
    if (folder / "README.md").is_file():
        shutil.copyfile(folder / "README.md", staging / "README.md")


# ---- training for int8 storage -------------------------------------------------------------------


def _fake_int8_config():
    """torchao's fake quantization that rounds a weight as :func:`int8_storage_config` stores it:
    int8, symmetric, one fp32 scale per row, float32 eps (Int8Tensor's); tested equal to the stored
    weights, not only close."""
    import torch
    from torchao.quantization.qat import IntxFakeQuantizeConfig

    return IntxFakeQuantizeConfig(
        torch.int8, granularity="per_channel", is_symmetric=True, eps=torch.finfo(torch.float32).eps
    )


def simulate_int8_storage(model: torch.nn.Module) -> int:
    """Quantization-aware training for int8 storage: from now on every forward pass of ``model``
    computes with the weights of :func:`stored_int8_modules` rounded exactly as int8 storage rounds
    them, while the float weights train underneath (gradients pass straight through the rounding).

    A model trained this way and stored int8 (``hf-punctcase quantize``, recipes/export_default.py)
    computes what it was trained and evaluated with, where a model trained in float meets the
    rounding only once stored. The modules become torchao's FakeQuantizedLinear / FakeQuantizedEmbedding
    (subclasses of Linear / Embedding with the same parameter names), so Trainer checkpoints keep
    plain state dicts and resume as usual. Undo with :func:`stop_simulating_int8_storage` before
    ``save_pretrained``. Returns how many weight matrices are rounded."""
    require_torchao("training for int8 storage")
    from torchao.quantization import quantize_
    from torchao.quantization.qat import QATConfig

    names = set(stored_int8_modules(model))
    quantize_(model, QATConfig(weight_config=_fake_int8_config(), step="prepare"), filter_fn=lambda _, name: name in names)
    return len(names)


def stop_simulating_int8_storage(model: torch.nn.Module) -> None:
    """Turn the modules :func:`simulate_int8_storage` changed back into plain Linear / Embedding layers
    holding the trained float weights (what ``save_pretrained`` should write: int8 storage rounds them
    again, to the same values)."""
    from torchao.quantization import quantize_
    from torchao.quantization.qat import FakeQuantizedEmbedding, FakeQuantizedLinear, QATConfig

    simulated = (FakeQuantizedLinear, FakeQuantizedEmbedding)
    quantize_(model, QATConfig(step="convert"), filter_fn=lambda module, _: isinstance(module, simulated))


__all__ = [
    "import_torchao_quietly",
    "int8_storage_config",
    "is_storage_quantized",
    "quantize_checkpoint",
    "quiet_torchao_import_noise",
    "save_quantized",
    "simulate_int8_storage",
    "stop_simulating_int8_storage",
    "stored_int8_modules",
    "storage_quantization",
    "weights_size",
]

"""What a checkpoint folder's weights are: the dtype its safetensors store them in (int8 storage
included) and how many parameters they hold."""

from __future__ import annotations

import os
from pathlib import Path


#: How a card names int8 storage (hf_punctcase.quantization): the encoder's Linear and Embedding weights.
INT8_WEIGHTS = "int8 per-row weight-only"


def stored_dtype(folder: str | os.PathLike) -> str:
    """The safetensors dtype name ("F32", "F16", "BF16", ...) a checkpoint's weights are stored in
    (of its first tensor; "F32" where there is none), or "I8" for a checkpoint whose encoder weights
    are stored as int8 (hf_punctcase.quantization)."""
    from safetensors import safe_open

    from ..quantization import is_storage_quantized

    if is_storage_quantized(folder):
        return "I8"
    weights = sorted(Path(folder).glob("*.safetensors"))
    if not weights:
        return "F32"
    with safe_open(str(weights[0]), framework="pt") as handle:
        name = next(iter(handle.keys()), None)
        return handle.get_slice(name).get_dtype() if name else "F32"


def parameter_count(folder: str | os.PathLike) -> int:
    """Parameters in a checkpoint folder's safetensors files (int8-stored weights counted once, without
    their per-row scales and zero points)."""
    from safetensors import safe_open

    total = 0
    for weights in Path(folder).glob("*.safetensors"):
        with safe_open(str(weights), framework="pt") as handle:
            for name in handle.keys():
                if name.endswith(("_scale", "_zero_point")):  # torchao's per-row terms of an int8 weight
                    continue
                numel = 1
                for dim in handle.get_slice(name).get_shape():
                    numel *= dim
                total += numel
    return total

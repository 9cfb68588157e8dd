"""What a resolved model has to run from, read off its folder without loading anything: its format's
runtime, an ONNX export's precision, and the runtime its config says it prefers on a CPU."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..execution import ONNXRUNTIME

#: ``preferred_cpu_runtime`` of a checkpoint whose int8 ONNX Runtime graph (per-token activation
#: scales, :mod:`hf_punctcase.export.cache`) is to run on CPUs without AMX or avx512_bf16.
INT8_GRAPH = "onnxruntime-int8"


@dataclass(frozen=True)
class Artifacts:
    """What a model folder holds, as the plan reads it.

    Attributes:
        folder: the local folder; None for a Hub repo id (its files are not here: it plans as a torch
            checkpoint that prefers nothing).
        runtime: the runtime of the folder's format (``"torch"``, ``"onnxruntime"``); None for a Hub id.
        onnx_precision: an ONNX export's precision (``"fp32"``, ``"int8"``), from its export record.
        preferred_cpu_runtime: what the checkpoint's config.json says it prefers on a CPU without AMX or avx512_bf16
            (:data:`INT8_GRAPH`), or None.
    """

    folder: Path | None = None
    runtime: str | None = None
    onnx_precision: str | None = None
    preferred_cpu_runtime: str | None = None


def artifacts_of(resolved) -> Artifacts:
    """The :class:`Artifacts` of a :class:`~hf_punctcase.checkpoints.ResolvedModel` (already checked)."""
    folder = resolved.folder
    if folder is None:
        return Artifacts()
    precision = None
    if resolved.runtime == ONNXRUNTIME:
        from ..backends.onnxruntime import read_export_info

        try:
            precision = str(read_export_info(folder).get("precision", "fp32"))
        except (OSError, ValueError):
            precision = "fp32"
    try:
        preferred = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("preferred_cpu_runtime")
    except (OSError, ValueError, AttributeError):
        preferred = None
    return Artifacts(folder, resolved.runtime, precision, preferred if isinstance(preferred, str) else None)


__all__ = ["Artifacts", "INT8_GRAPH", "artifacts_of"]

"""ONNX exports (:func:`hf_punctcase.export.onnx.export_onnx`): ``model.onnx`` and no torch weights, run
by ONNX Runtime on the CPU, in the pipeline (:class:`OnnxModel`) or without torch
(:class:`hf_punctcase.runtime.OnDeviceRestorer`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..faults import checkpoint_fault as fault
from ..execution import ONNXRUNTIME
from ..backends.onnxruntime import EXPORT_INFO_FILE, ONNX_MODEL_FILE, CachedCutsBackend, OnnxBackend
from .base import GraphModel, ModelFormat
from .torch import weight_files

#: ``from_pretrained`` arguments that choose where a torch checkpoint's files come from: an ONNX export
#: folder has nothing to choose there, so they are accepted and unused.
LOADING_ONLY = (
    "cache_dir", "code_revision", "config", "force_download", "local_files_only", "revision", "subfolder", "token",
    "trust_remote_code",
)


class OnnxFormat(ModelFormat):
    """A folder exported to ONNX: ``model.onnx`` with the checkpoint's config and tokenizer."""

    name = "onnx"
    runtime = ONNXRUNTIME
    files = ONNX_MODEL_FILE
    description = "an ONNX export"

    def detect(self, folder: Path) -> bool:
        return (folder / ONNX_MODEL_FILE).is_file() and not weight_files(folder)

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        # The graph is all that runs: no code from the folder, whatever its model type.
        if (folder / ONNX_MODEL_FILE).stat().st_size == 0:
            raise fault(folder, f"{ONNX_MODEL_FILE} is empty (0 bytes)")
        problem = onnx_file_problem(folder / ONNX_MODEL_FILE)
        if problem:
            raise fault(folder, f"{ONNX_MODEL_FILE} is truncated or not an ONNX model ({problem})")
        # The fields restoration reads from config.json besides the labels (the torch format checks
        # every field against its config class; an export is read without one).
        lexicon = config.get("mixed_case_lexicon")
        if lexicon is not None and not (
            isinstance(lexicon, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in lexicon.items())
        ):
            raise fault(folder, f"config.json mixed_case_lexicon must be an object of strings or null, got {lexicon!r:.80}")
        if not isinstance(config.get("lowercase_input", True), bool):
            raise fault(folder, f"config.json lowercase_input must be true or false, got {config['lowercase_input']!r:.80}")

    def load_model(
        self,
        folder: str,
        *,
        dtype=None,
        device_map=None,
        intra_op_num_threads: int | None = None,
        providers: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> OnnxModel:
        """The export as an :class:`OnnxModel`, run by ONNX Runtime on the CPU. ``dtype`` may only be
        float32 or "auto" (the graph's precision was fixed at export) and there is no ``device_map``;
        the other arguments of ``from_pretrained`` (:data:`LOADING_ONLY`) have nothing to choose here."""
        if device_map is not None:
            raise ValueError(f"model path {folder} is an ONNX export: it runs on the CPU, without a device_map")
        check_runs_as_exported(folder, dtype=dtype)
        unknown = sorted(name for name in kwargs if name not in LOADING_ONLY and not name.startswith("_"))
        if unknown:
            raise TypeError(f"model path {folder} is an ONNX export: from_pretrained got arguments it cannot use: {unknown}")
        return OnnxModel(folder, providers=providers, intra_op_num_threads=intra_op_num_threads)


def check_runs_as_exported(
    folder: str,
    *,
    device=None,
    dtype=None,
    kind: str = "an ONNX export",
    runtime: str = "ONNX Runtime",
    precision: str = "its precision was fixed at export",
) -> None:
    """Raise unless an export (``kind``, run by ``runtime``) can run on ``device`` in ``dtype`` as given
    to ``pipeline()``: on the CPU (None or a negative int name it too), in float32 or "auto" (the
    graph's precision is the export's, or the runtime's choice)."""
    if device is not None and not (isinstance(device, int) and device < 0) and str(device).split(":")[0] != "cpu":
        raise ValueError(f"model path {folder} is {kind}: it runs on the CPU with {runtime}, not on {device}")
    if str(dtype).removeprefix("torch.") not in ("None", "auto", "float32"):
        raise ValueError(f"model path {folder} is {kind}: {precision} (dtype {dtype} asked)")


#: The fields of an ONNX ModelProto that a model must have: ``ir_version`` (1) and ``graph`` (7).
REQUIRED_MODEL_FIELDS = {1: "ir_version", 7: "graph"}


def onnx_file_problem(file: Path) -> str | None:
    """What makes ``file`` not a whole ONNX model, or None. Reads the top level of its protobuf (a
    model is a sequence of tagged fields; the graph, the bulk of the file, is one field skipped by its
    length), so a truncated or random file is told in microseconds and without onnx or ONNX Runtime,
    whose own message is a traceback without the path."""
    data = file.read_bytes()
    position, seen = 0, set()
    while position < len(data):
        tag, position = _varint(data, position)
        if tag is None:
            return f"a field tag runs past the end at byte {position}"
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            return f"field number 0 at byte {position}"
        if wire_type == 0:
            value, position = _varint(data, position)
            if value is None:
                return f"a number runs past the end at byte {position}"
        elif wire_type == 1 or wire_type == 5:
            position += 8 if wire_type == 1 else 4
        elif wire_type == 2:
            length, position = _varint(data, position)
            if length is None or position + length > len(data):
                return f"field {number} needs {length} bytes at byte {position}; the file ends at byte {len(data)}"
            position += length
        else:
            return f"wire type {wire_type} at byte {position} is not one a model uses"
        seen.add(number)
    if position > len(data):
        return f"the last field runs past the end at byte {len(data)}"
    absent = [name for number, name in REQUIRED_MODEL_FIELDS.items() if number not in seen]
    return f"no {' and no '.join(absent)}" if absent else None


def _varint(data: bytes, position: int) -> tuple[int | None, int]:
    """A protobuf varint at ``position``: its value (None if the data ends inside it) and the position after it."""
    value = shift = 0
    while position < len(data):
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift > 63:
            return None, position
    return None, position


class OnnxModel(GraphModel):
    """A folder exported to ONNX as the ``punct-case`` pipeline's model: the checkpoint's config (its
    labels, MIXED-case lexicon and window limit) and an :class:`OnnxBackend` that runs ``model.onnx``
    on the CPU with ONNX Runtime. Not a torch module: it has what the pipeline asks of a model
    (:class:`~hf_punctcase.formats.base.GraphModel`) and carries its own ``backend``.
    """

    runtime = ONNXRUNTIME
    runtime_name = "ONNX Runtime"
    files = (ONNX_MODEL_FILE, EXPORT_INFO_FILE)

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        providers: Sequence[str] | None = None,
        intra_op_num_threads: int | None = None,
        cut_dir: str | os.PathLike | None = None,
    ):
        super().__init__(folder)
        options = {"providers": providers, "intra_op_num_threads": intra_op_num_threads}
        self._attach(OnnxBackend(self.folder, **options) if cut_dir is None else CachedCutsBackend(self.folder, cut_dir, **options))


__all__ = ["LOADING_ONLY", "OnnxFormat", "OnnxModel", "check_runs_as_exported", "onnx_file_problem"]

"""OpenVINO IR folders (``openvino_model.xml`` and ``.bin``, the layout Optimum Intel writes) run by
OpenVINO on the CPU, in the precision the CPU computes fastest in: bf16 where it has AMX or
avx512_bf16 (OpenVINO's ``INFERENCE_PRECISION_HINT``), else fp32.

The embedded default runs this way on CPUs with AMX or avx512_bf16: its graph is converted once from its fp32 ONNX
export and kept in the cache (:func:`hf_punctcase.export.cache.build_graph`, kind ``"openvino"``). A folder of
this format loads through the same ``from_pretrained`` and ``pipeline("punct-case", model=folder)``.
The graph runs through :class:`~hf_punctcase.backends.openvino.OpenVinoBackend`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..execution import OPENVINO
from ..faults import checkpoint_fault as fault
from ..backends.openvino import OpenVinoBackend
from .base import GraphModel, ModelFormat
from .onnx import LOADING_ONLY, check_runs_as_exported
from .torch import weight_files

#: The graph of an OpenVINO folder, and its weights beside it.
OPENVINO_MODEL_FILE = "openvino_model.xml"
OPENVINO_WEIGHTS_FILE = "openvino_model.bin"


class OpenVinoFormat(ModelFormat):
    """A folder holding an OpenVINO IR graph with the checkpoint's config and tokenizer."""

    name = "openvino"
    runtime = OPENVINO
    files = f"{OPENVINO_MODEL_FILE} and {OPENVINO_WEIGHTS_FILE}"
    description = "an OpenVINO export"

    def detect(self, folder: Path) -> bool:
        return (folder / OPENVINO_MODEL_FILE).is_file() and not weight_files(folder)

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        # The graph is all that runs: no code from the folder, whatever its model type.
        if not (folder / OPENVINO_WEIGHTS_FILE).is_file():
            raise fault(folder, f"{OPENVINO_MODEL_FILE} has no {OPENVINO_WEIGHTS_FILE} beside it")
        head = (folder / OPENVINO_MODEL_FILE).read_bytes()[:512].lstrip()
        if not head.startswith(b"<?xml") and not head.startswith(b"<net"):
            raise fault(folder, f"{OPENVINO_MODEL_FILE} is not an OpenVINO IR graph (no XML network)")

    def load_model(
        self,
        folder: str,
        *,
        dtype=None,
        device_map=None,
        num_threads: int | None = None,
        intra_op_num_threads: int | None = None,
        **kwargs: Any,
    ):
        """The folder as an :class:`OpenVinoModel` on the CPU; ``dtype`` may only be float32 or "auto"
        (OpenVINO picks the CPU's precision), and there is no ``device_map``. ``intra_op_num_threads``
        (the name :func:`hf_punctcase.load_pipeline` passes for every graph) is OpenVINO's ``num_threads``."""
        if num_threads is not None and intra_op_num_threads is not None and num_threads != intra_op_num_threads:
            raise ValueError(f"num_threads={num_threads} and intra_op_num_threads={intra_op_num_threads} disagree")
        if device_map is not None:
            raise ValueError(f"model path {folder} is an OpenVINO export: it runs on the CPU, without a device_map")
        check_runs_as_exported(
            folder, dtype=dtype, kind=self.description, runtime="OpenVINO", precision="OpenVINO runs it in the CPU's precision"
        )
        unknown = sorted(name for name in kwargs if name not in LOADING_ONLY and not name.startswith("_"))
        if unknown:
            raise TypeError(f"model path {folder} is an OpenVINO export: from_pretrained got arguments it cannot use: {unknown}")
        return OpenVinoModel(folder, num_threads=num_threads if num_threads is not None else intra_op_num_threads)


class OpenVinoModel(GraphModel):
    """A folder's OpenVINO graph (``openvino_model.xml``) as the ``punct-case`` pipeline's model: the
    checkpoint's config and an :class:`OpenVinoBackend` (what the pipeline asks of a model,
    :class:`~hf_punctcase.formats.base.GraphModel`; it carries its own ``backend``)."""

    runtime = OPENVINO
    runtime_name = "OpenVINO"
    files = (OPENVINO_MODEL_FILE, OPENVINO_WEIGHTS_FILE)

    def __init__(self, folder: str | os.PathLike, *, precision: str | None = None, num_threads: int | None = None):
        super().__init__(folder)
        self._attach(OpenVinoBackend(self.folder / OPENVINO_MODEL_FILE, precision=precision, num_threads=num_threads))

    @property
    def precision(self) -> str:
        return self.backend.precision


__all__ = ["OPENVINO_MODEL_FILE", "OPENVINO_WEIGHTS_FILE", "OpenVinoFormat", "OpenVinoModel"]

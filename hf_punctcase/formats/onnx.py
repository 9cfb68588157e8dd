"""ONNX exports (:func:`hf_punctcase.export.onnx.export_onnx`): ``model.onnx`` and no torch weights, run
by ONNX Runtime on the CPU, in the pipeline (:class:`OnnxModel`) or without torch
(:class:`hf_punctcase.runtime.OnDeviceRestorer`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..faults import checkpoint_fault as fault
from ..execution import ONNXRUNTIME
from ..runtime.onnx_backend import EXPORT_INFO_FILE, ONNX_MODEL_FILE, OnnxBackend
from .base import ModelFormat
from ..tasks import tasks_of
from .torch import weight_files

#: ``pipeline()`` arguments that choose how a torch model is loaded: an ONNX export has nothing to
#: choose there (its tokenizer and graph are in the folder), so they are accepted and unused.
LOADING_ONLY = (
    "config", "feature_extractor", "framework", "image_processor", "model_kwargs", "pipeline_class", "processor",
    "revision", "token", "trust_remote_code", "use_fast",
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

    def load_pipeline(
        self,
        folder: str,
        *,
        task: str,
        tokenizer=None,
        device=None,
        dtype=None,
        device_map=None,
        batch_size: int | None = None,
        intra_op_num_threads: int | None = None,
        **kwargs: Any,
    ):
        """The same windows, batching and decoding as for a torch model, with the model run by ONNX
        Runtime on the CPU (:class:`OnnxModel`). The folder's tokenizer is loaded unless one is given;
        ``device`` may only name the CPU and ``dtype`` only float32 or "auto" (the graph's precision was
        fixed at export). Arguments that choose how a torch model loads (:data:`LOADING_ONLY`) are
        ignored."""
        import torch
        from transformers import AutoTokenizer

        from ..pipelines import PunctCasePipeline

        if device_map is not None:
            raise ValueError(f"model path {folder} is an ONNX export: it runs on the CPU, without a device_map")
        if device is not None and not (isinstance(device, int) and device < 0) and torch.device(device).type != "cpu":
            raise ValueError(f"model path {folder} is an ONNX export: it runs on the CPU with ONNX Runtime, not on {device}")
        if dtype not in (None, "auto", "float32", torch.float32):
            raise ValueError(f"model path {folder} is an ONNX export: its precision was fixed at export (dtype {dtype} asked)")
        for name in LOADING_ONLY:
            kwargs.pop(name, None)
        model = OnnxModel(folder, intra_op_num_threads=intra_op_num_threads)
        if tokenizer is None or isinstance(tokenizer, (str, os.PathLike)):
            tokenizer = AutoTokenizer.from_pretrained(tokenizer or folder)
        return PunctCasePipeline(
            model=model, tokenizer=tokenizer, task=task, device=torch.device("cpu"), batch_size=batch_size, **kwargs
        )


class OnnxModel:
    """A folder exported to ONNX as the ``punct-case`` pipeline's model: the checkpoint's config (its
    labels, MIXED-case lexicon and window limit) and an :class:`OnnxBackend` that runs ``model.onnx``
    on the CPU with ONNX Runtime. Not a torch module: it has what the pipeline asks of a model
    (``config``, ``device``, ``to``, ``save_pretrained``) and carries its own ``backend``.
    """

    runtime = ONNXRUNTIME

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        providers: Sequence[str] | None = None,
        intra_op_num_threads: int | None = None,
    ):
        import torch
        from transformers import AutoConfig

        self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.folder = Path(folder)
        self.name_or_path = str(folder)
        self.config = AutoConfig.from_pretrained(self.folder)
        self.backend = OnnxBackend(self.folder, providers=providers, intra_op_num_threads=intra_op_num_threads)
        self.backend.check_heads({task.name: task.labels_in(self.config) or () for task in tasks_of(self.config)})

    def to(self, device) -> OnnxModel:
        import torch

        if torch.device(device).type != "cpu":
            raise ValueError(f"an ONNX model runs on the CPU with ONNX Runtime, not on {device}")
        return self

    def eval(self) -> OnnxModel:
        return self

    def save_pretrained(self, save_directory: str | os.PathLike, **kwargs) -> None:
        """Copy the exported model (``model.onnx``, its export record) and write the config."""
        target = Path(save_directory)
        target.mkdir(parents=True, exist_ok=True)
        for name in (ONNX_MODEL_FILE, EXPORT_INFO_FILE):
            if (self.folder / name).is_file() and (self.folder / name).resolve() != (target / name).resolve():
                shutil.copyfile(self.folder / name, target / name)
        self.config.save_pretrained(target)


__all__ = ["LOADING_ONLY", "OnnxFormat", "OnnxModel"]

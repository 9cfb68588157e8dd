"""Backends: subword ids in, per-task probabilities out. The pipeline and restoration never touch a
model's outputs directly; a backend names each head's probabilities by task (``"punct"``, ``"case"``,
and any further head a model family carries), as NumPy arrays on the CPU.

:class:`TorchBackend` runs a torch model of any family; :class:`OnnxBackend` (from the torch-free
:mod:`hf_punctcase.runtime`) runs a folder exported to ONNX, which the pipeline holds as an
:class:`OnnxModel`. :func:`backend_for` picks the one for a pipeline's model.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..runtime.onnx_backend import EXPORT_INFO_FILE, LOGITS_SUFFIX, ONNX_MODEL_FILE, OnnxBackend


def task_logits(output) -> dict[str, torch.Tensor]:
    """A model output's logits by task: every ``<task>_logits`` field. ``logits`` itself is an alias
    (for transformers' token-classification pipeline), not a task of its own."""
    return {
        name[: -len(LOGITS_SUFFIX)]: value
        for name, value in output.items()
        if name.endswith(LOGITS_SUFFIX) and value is not None
    }


class TorchBackend:
    """Runs a torch model of any family whose output has one ``<task>_logits`` field per head."""

    def __init__(self, model: torch.nn.Module):
        self.model = model

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, np.ndarray]:
        output = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        # float() first: bf16 has no NumPy dtype; cpu() for a model on an accelerator.
        return {task: value.float().softmax(-1).cpu().numpy() for task, value in task_logits(output).items()}


class OnnxModel:
    """A folder exported to ONNX (:func:`hf_punctcase.export.onnx.export_onnx`), as the ``punct-case``
    pipeline's model: the checkpoint's config (its labels, MIXED-case lexicon and window limit) and an
    :class:`OnnxBackend` that runs ``model.onnx`` on the CPU with ONNX Runtime. Not a torch module:
    it has what the pipeline asks of a model (``config``, ``device``, ``to``, ``save_pretrained``).
    """

    device = torch.device("cpu")
    dtype = torch.float32

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        providers: Sequence[str] | None = None,
        intra_op_num_threads: int | None = None,
    ):
        from transformers import AutoConfig

        self.folder = Path(folder)
        self.name_or_path = str(folder)
        self.config = AutoConfig.from_pretrained(self.folder)
        self.backend = OnnxBackend(self.folder, providers=providers, intra_op_num_threads=intra_op_num_threads)
        declared = self.backend.num_labels
        for task, labels in (("punct", self.config.punct_labels), ("case", self.config.case_labels)):
            if task not in declared:
                raise ValueError(f"{self.folder / ONNX_MODEL_FILE} has no {task}_logits output")
            if declared[task] is not None and declared[task] != len(labels):
                raise ValueError(
                    f"{self.folder / ONNX_MODEL_FILE} gives {declared[task]} {task} classes but config.json has "
                    f"{len(labels)} {task}_labels"
                )

    def to(self, device) -> OnnxModel:
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


def backend_for(model) -> TorchBackend | OnnxBackend:
    """The backend that runs a pipeline's model: the ONNX Runtime session of an :class:`OnnxModel`,
    else a :class:`TorchBackend` over the torch model."""
    return model.backend if isinstance(model, OnnxModel) else TorchBackend(model)


__all__ = ["OnnxBackend", "OnnxModel", "TorchBackend", "backend_for", "task_logits"]

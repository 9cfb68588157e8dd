"""Backends: subword ids in, per-task probabilities out. The pipeline and restoration never touch a
model's outputs directly; a backend names each head's probabilities by task (``"punct"``, ``"case"``,
and any further head a model family carries), as NumPy arrays on the CPU.

:class:`TorchBackend` runs a torch model of any family; :class:`OnnxBackend` (from the torch-free
:mod:`hf_punctcase.runtime`) runs a folder exported to ONNX, which the pipeline holds as an
:class:`~hf_punctcase.formats.onnx.OnnxModel`. :func:`backend_for` picks the one for a pipeline's model.
"""

from __future__ import annotations

import numpy as np
import torch

from ..runtime.onnx_backend import LOGITS_SUFFIX, OnnxBackend


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


def backend_for(model) -> TorchBackend | OnnxBackend:
    """The backend that runs a pipeline's model: a :class:`TorchBackend` over a torch model; a model of
    another runtime (:class:`hf_punctcase.formats.onnx.OnnxModel`, ...) carries its own ``backend``."""
    if isinstance(model, torch.nn.Module):
        return TorchBackend(model)
    if not callable(getattr(model, "backend", None)):
        raise TypeError(f"{type(model).__name__} is neither a torch model nor a model with a backend")
    return model.backend


__all__ = ["OnnxBackend", "TorchBackend", "backend_for", "task_logits"]

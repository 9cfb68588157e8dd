"""Backends: subword ids in, per-task probabilities out. The pipeline and restoration never touch a
model's outputs directly; a backend names each head's probabilities by task (``"punct"``, ``"case"``,
and any further head a model family carries), as NumPy arrays on the CPU: those of the tasks a call
names (``backend(input_ids, attention_mask, tasks=...)``, :func:`hf_punctcase.tasks.tasks_to_run`), or
every head's. The graph runtimes then run only what those tasks need.

:class:`TorchBackend` runs a torch model of any family; :class:`OnnxBackend` (from the torch-free
:mod:`hf_punctcase.runtime`) runs a folder exported to ONNX, which the pipeline holds as an
:class:`~hf_punctcase.formats.onnx.OnnxModel`. :func:`backend_for` picks the one for a pipeline's model.
"""

from __future__ import annotations

import inspect
from collections.abc import Collection

import numpy as np
import torch

from ..runtime.onnx_backend import LOGITS_SUFFIX, OnnxBackend, chosen_outputs, run_each_sequence_alone


def task_logits(output) -> dict[str, torch.Tensor]:
    """A model output's logits by task: every ``<task>_logits`` field. ``logits`` itself is an alias
    (for transformers' token-classification pipeline), not a task of its own."""
    return {
        name[: -len(LOGITS_SUFFIX)]: value
        for name, value in output.items()
        if name.endswith(LOGITS_SUFFIX) and value is not None
    }


#: Precisions in which a CPU's matrix kernels round differently with the shape of the batch (AMX and
#: avx512_bf16 kernels block a product by its size): sequences run one at a time there.
SHAPE_SENSITIVE_DTYPES = (torch.bfloat16, torch.float16)


class TorchBackend:
    """Runs a torch model of any family whose output has one ``<task>_logits`` field per head.

    On the CPU in bf16 or fp16 each sequence of a batch runs alone, cut to its own tokens: padding
    and batch mates change the shapes of the matrix products, whose reduced-precision kernels then
    round differently, and a near tie would flip a label with the company a text keeps. A transcript
    is restored the same alone and in any batch; in fp32 and on GPUs the batch runs at once."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        # A family whose forward takes `tasks` leaves out the heads a call does not ask for.
        self._forward_takes_tasks = "tasks" in inspect.signature(model.forward).parameters

    @property
    def runs_each_sequence_alone(self) -> bool:
        return self.model.device.type == "cpu" and self.model.dtype in SHAPE_SENSITIVE_DTYPES

    def __call__(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, tasks: Collection[str] | None = None
    ) -> dict[str, np.ndarray]:
        """Per-task probabilities; ``tasks``: the tasks to return (default: every head's)."""
        if len(input_ids) > 1 and self.runs_each_sequence_alone:
            return run_each_sequence_alone(lambda ids, mask: self(ids, mask, tasks), input_ids, attention_mask)
        kwargs = {"tasks": tasks} if tasks is not None and self._forward_takes_tasks else {}
        output = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **kwargs)
        logits = task_logits(output)
        # float() first: bf16 has no NumPy dtype; cpu() for a model on an accelerator.
        return {task: logits[task].float().softmax(-1).cpu().numpy() for task in chosen_outputs(tuple(logits), tasks)}


def backend_for(model) -> TorchBackend | OnnxBackend:
    """The backend that runs a pipeline's model: a :class:`TorchBackend` over a torch model; a model of
    another runtime (:class:`hf_punctcase.formats.onnx.OnnxModel`, ...) carries its own ``backend``."""
    if isinstance(model, torch.nn.Module):
        return TorchBackend(model)
    if not callable(getattr(model, "backend", None)):
        raise TypeError(f"{type(model).__name__} is neither a torch model nor a model with a backend")
    return model.backend


__all__ = ["OnnxBackend", "TorchBackend", "backend_for", "task_logits"]

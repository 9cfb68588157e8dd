"""The torch backend: runs a torch model of any family whose output has one ``<task>_logits`` field
per head (:class:`TorchBackend`)."""

from __future__ import annotations

import inspect
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import torch

from ..tasks import tasks_of
from .base import LOGITS_SUFFIX, check_declared_heads, chosen_outputs, run_each_sequence_alone


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

    def check_heads(self, label_sets: Mapping[str, Sequence[str]]) -> None:
        """Raise ValueError unless the model's config gives it a head per task of ``label_sets`` (task
        name → labels), each with that many labels: a torch model has the heads its config lists."""
        declared = {task.name: len(task.labels_in(self.model.config) or ()) for task in tasks_of(self.model.config)}
        check_declared_heads(type(self.model).__name__, declared, label_sets)

    @property
    def runs_each_sequence_alone(self) -> bool:
        return self.model.device.type == "cpu" and self.model.dtype in SHAPE_SENSITIVE_DTYPES

    @torch.no_grad()
    def __call__(
        self, input_ids, attention_mask, tasks: Collection[str] | None = None
    ) -> dict[str, np.ndarray]:
        """Per-task probabilities; ``tasks``: the tasks to return (default: every head's)."""
        # NumPy arrays and lists as every backend takes them; a tensor already on the model's device stays as it is.
        input_ids = torch.as_tensor(input_ids, device=self.model.device)
        attention_mask = torch.as_tensor(attention_mask, device=self.model.device)
        if len(input_ids) > 1 and self.runs_each_sequence_alone:
            return run_each_sequence_alone(lambda ids, mask: self(ids, mask, tasks), input_ids, attention_mask)
        kwargs = {"tasks": tasks} if tasks is not None and self._forward_takes_tasks else {}
        output = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **kwargs)
        logits = task_logits(output)
        # float() first: bf16 has no NumPy dtype; cpu() for a model on an accelerator.
        return {task: logits[task].float().softmax(-1).cpu().numpy() for task in chosen_outputs(tuple(logits), tasks)}


__all__ = ["SHAPE_SENSITIVE_DTYPES", "TorchBackend", "task_logits"]

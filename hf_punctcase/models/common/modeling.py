"""Model pieces every family shares: the output with one ``<task>_logits`` field per head, the joint loss,
and the mixin that writes the remote-code bundle next to a saved checkpoint."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn
from transformers.utils import ModelOutput

from ...labels import IGNORE_INDEX
from ...tasks import PUNCTUATION, TASKS, tasks_of


@dataclass
class JointTokenClassifierOutput(ModelOutput):
    """Output of every model family ([`JointTokenClassificationModel`], [`CnnBiLstmForJointTokenClassification`]).

    Args:
        loss (`torch.FloatTensor` of shape `()`, *optional*):
            α·CE(punctuation) + γ·CE(casing) (+ β·CE(disfluency), + each head task's weighted
            cross-entropy), returned when labels are given (:func:`joint_loss`).
        logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            The punctuation logits again, under the name that transformers' token-classification
            pipeline and the Hub widget read (with the config's `id2label`).
        punct_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            Punctuation scores before softmax.
        case_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_case_labels)`):
            Casing scores before softmax.
        disfl_logits (`torch.FloatTensor` of shape `(batch, seq_len, 2)`, *optional*):
            FLUENT / DISFLUENT scores before softmax, when the model has the disfluency head. A head
            task registered with :func:`hf_punctcase.tasks.register_task` adds its own
            ``<task>_logits`` after the fields listed here.
        hidden_states (`tuple(torch.FloatTensor)`, *optional*):
            The encoder's hidden states, when `output_hidden_states=True`.
        attentions (`tuple(torch.FloatTensor)`, *optional*):
            The encoder's attention weights, when `output_attentions=True`.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    punct_logits: torch.FloatTensor | None = None
    case_logits: torch.FloatTensor | None = None
    disfl_logits: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None


def _masked_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor | None = None, label_smoothing: float = 0.0
) -> torch.Tensor:
    """Mean cross-entropy over labelled positions; 0 (with a gradient path) when none is labelled.

    A batch can hold no casing label at all (lowercase sources mark casing as ignored), where plain
    ``CrossEntropyLoss`` would return NaN.
    """
    flat_labels = labels.reshape(-1)
    if not (flat_labels != IGNORE_INDEX).any():
        return logits.sum() * 0.0
    return nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        flat_labels,
        weight=weight,
        ignore_index=IGNORE_INDEX,
        label_smoothing=label_smoothing,
    )


def joint_loss(
    config, logits: Mapping[str, torch.Tensor | None], labels: Mapping[str, torch.Tensor | None]
) -> torch.Tensor | None:
    """The loss of every model family: the sum over the model's tasks (:func:`hf_punctcase.tasks.tasks_of`)
    of each task's cross-entropy over its labelled positions (each term only where its labels are
    given; None without labels), weighted by the config's ``<loss_weight_field>`` (α = ``punct_loss_weight``,
    γ = ``case_loss_weight``, β = ``disfluency_loss_weight``; 1 where the config has none), with
    ``punct_class_weights`` (any task's ``<name>_class_weights``) and ``label_smoothing``.
    ``logits`` and ``labels`` are by task name."""
    given = {name: value for name, value in labels.items() if value is not None}
    if not given:
        return None
    tasks = tasks_of(config)
    for name in given:
        if name not in {task.name for task in tasks}:
            task = TASKS[name]
            raise ValueError(f"{task.label_field} were given, but the model has no {task.title} head (config.{task.config_field})")
    loss = next(iter(logits.values())).new_zeros(())
    for task in tasks:
        if task.name not in given:
            continue
        weight = getattr(config, task.loss_weight_field, 1.0) if task.loss_weight_field else 1.0
        class_weights = getattr(config, f"{task.name}_class_weights", None)
        class_weights = torch.tensor(class_weights, device=logits[task.name].device) if class_weights else None
        loss = loss + weight * _masked_cross_entropy(logits[task.name], given[task.name], class_weights, config.label_smoothing)
    return loss


def joint_output(
    loss: torch.Tensor | None,
    logits: Mapping[str, torch.Tensor],
    hidden_states: tuple[torch.Tensor, ...] | None = None,
    attentions: tuple[torch.Tensor, ...] | None = None,
) -> JointTokenClassifierOutput:
    """The output of every model family from its logits by task name: one ``<task>_logits`` field per
    head (a head task registered outside the package gets a field after the declared ones), and
    ``logits`` the punctuation logits again."""
    declared = {field.name for field in dataclasses.fields(JointTokenClassifierOutput)}
    fields = {TASKS[name].logits_field: value for name, value in logits.items()}
    output = JointTokenClassifierOutput(
        loss=loss,
        logits=logits[PUNCTUATION.name],
        hidden_states=hidden_states,
        attentions=attentions,
        **{name: value for name, value in fields.items() if name in declared},
    )
    for name, value in fields.items():
        if name not in declared:
            output[name] = value
    return output


def task_labels_from(kwargs: dict) -> dict[str, torch.Tensor | None]:
    """The head tasks' label tensors a ``forward`` received as keyword arguments (``<task>_labels`` of
    every registered head task: :func:`joint_loss` refuses those of a head the model lacks), taken
    out of ``kwargs``, by task name."""
    return {task.name: kwargs.pop(task.label_field) for task in TASKS.values() if task.label_field in kwargs and not task.required}


class SavesRemoteCode:
    """Mixin of every model family: ``save_pretrained`` also writes the code that loads the checkpoint
    without the plugin (trust_remote_code=True). The plugin sets ``remote_code_exporter``
    (hf_punctcase.export.remote_code) on each family's classes; inside that exported code it is None,
    and transformers copies the (flat) files itself."""

    remote_code_exporter: ClassVar = None

    def save_pretrained(self, save_directory: str | os.PathLike, *args, **kwargs):
        exporter = type(self).remote_code_exporter
        if exporter is not None:
            exporter.prepare_config(self)
        super().save_pretrained(save_directory, *args, **kwargs)
        if exporter is not None and kwargs.get("is_main_process", True):
            exporter.write_files(save_directory, self)


__all__ = ["JointTokenClassifierOutput", "SavesRemoteCode", "joint_loss", "joint_output", "task_labels_from"]

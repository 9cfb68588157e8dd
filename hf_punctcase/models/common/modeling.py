"""Model pieces every family shares: the output with one ``<task>_logits`` field per head, the joint loss,
and the mixin that writes the remote-code bundle next to a saved checkpoint."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn
from transformers.utils import ModelOutput

from ...labels import IGNORE_INDEX


@dataclass
class JointTokenClassifierOutput(ModelOutput):
    """Output of every model family ([`JointTokenClassificationModel`], [`CnnBiLstmForJointTokenClassification`]).

    Args:
        loss (`torch.FloatTensor` of shape `()`, *optional*):
            α·CE(punctuation) + CE(casing) (+ β·CE(disfluency)), returned when labels are given.
        logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            The punctuation logits again, under the name that transformers' token-classification
            pipeline and the Hub widget read (with the config's `id2label`).
        punct_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_punct_labels)`):
            Punctuation scores before softmax.
        case_logits (`torch.FloatTensor` of shape `(batch, seq_len, num_case_labels)`):
            Casing scores before softmax.
        disfl_logits (`torch.FloatTensor` of shape `(batch, seq_len, 2)`, *optional*):
            FLUENT / DISFLUENT scores before softmax, when the model has the disfluency head.
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
    config,
    punct_logits: torch.Tensor,
    case_logits: torch.Tensor,
    punct_labels: torch.Tensor | None,
    case_labels: torch.Tensor | None,
    disfl_logits: torch.Tensor | None = None,
    disfl_labels: torch.Tensor | None = None,
) -> torch.Tensor | None:
    """α·CE(punct) + γ·CE(case) (+ β·CE(disfluency)) over the labelled positions (each term only where
    its labels are given; None without labels), with the config's ``punct_loss_weight`` (α),
    ``case_loss_weight`` (γ, 1 where the family has none), ``disfluency_loss_weight`` (β),
    ``punct_class_weights`` and ``label_smoothing``: the loss of every model family."""
    if punct_labels is None and case_labels is None and disfl_labels is None:
        return None
    loss = punct_logits.new_zeros(())
    smoothing = config.label_smoothing
    if punct_labels is not None:
        weights = config.punct_class_weights
        weights = torch.tensor(weights, device=punct_logits.device) if weights else None
        loss = loss + config.punct_loss_weight * _masked_cross_entropy(punct_logits, punct_labels, weights, smoothing)
    if case_labels is not None:
        case_weight = getattr(config, "case_loss_weight", 1.0)
        loss = loss + case_weight * _masked_cross_entropy(case_logits, case_labels, label_smoothing=smoothing)
    if disfl_labels is not None:
        if disfl_logits is None:
            raise ValueError("disfl_labels were given, but the model has no disfluency head (config.disfluency_labels)")
        loss = loss + config.disfluency_loss_weight * _masked_cross_entropy(disfl_logits, disfl_labels, label_smoothing=smoothing)
    return loss


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


__all__ = ["JointTokenClassifierOutput", "SavesRemoteCode", "joint_loss"]

"""The optimiser a run trains with, where it is not the Trainer's own AdamW: torch Adam with an L2
penalty (as the CNN-BiLSTM's authors train it), and layer-wise learning-rate decay over the joint
transformer's encoder (each layer's rate a factor below the one above it, as ULMFiT and ELECTRA train)."""

from __future__ import annotations

from collections.abc import Collection

import torch
from torch import nn
from transformers import TrainingArguments

from ..models.joint_transformer.modeling import encoder_layers
from .arguments import ModelArguments


def layerwise_parameter_groups(
    model: nn.Module,
    learning_rate: float,
    decay: float,
    weight_decay: float,
    decayed_names: Collection[str],
) -> list[dict]:
    """Optimiser parameter groups of the joint transformer with layer-wise learning-rate decay: what is
    not the encoder (the heads, a command branch) at ``learning_rate``, the encoder's top layer at
    ``learning_rate · decay``, each layer below one more factor of ``decay``, and the encoder's other
    parameters (embeddings, a shared relative-position bias) at the rate of a layer below the first.
    ``decayed_names`` are the parameters weight decay applies to (the Trainer's choice)."""
    layers = encoder_layers(model.encoder)
    head_depth = len(layers) + 1
    depth = {id(parameter): index for index, layer in enumerate(layers, start=1) for parameter in layer.parameters()}
    in_encoder = {id(parameter) for parameter in model.encoder.parameters()}
    groups: dict[tuple[int, bool], dict] = {}
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        level = depth.get(id(parameter), 0 if id(parameter) in in_encoder else head_depth)
        decayed = name in decayed_names
        group = groups.setdefault(
            (level, decayed),
            {"params": [], "lr": learning_rate * decay ** (head_depth - level), "weight_decay": weight_decay if decayed else 0.0},
        )
        group["params"].append(parameter)
    return [groups[key] for key in sorted(groups)]


def optimizer_cls_and_kwargs(
    model: nn.Module,
    model_args: ModelArguments,
    training_args: TrainingArguments,
    decayed_names: Collection[str],
) -> tuple[type[torch.optim.Optimizer], dict] | None:
    """The Trainer's ``optimizer_cls_and_kwargs`` for the run, or None for its default optimiser:
    torch Adam with ``weight_decay`` as an L2 penalty (``weight_decay_as_l2``), torch AdamW otherwise,
    with the parameter groups of :func:`layerwise_parameter_groups` under ``layer_learning_rate_decay``."""
    layerwise = model_args.layer_learning_rate_decay != 1.0
    if not (model_args.weight_decay_as_l2 or layerwise):
        return None
    optimizer_class = torch.optim.Adam if model_args.weight_decay_as_l2 else torch.optim.AdamW
    kwargs = {
        "lr": training_args.learning_rate,
        "weight_decay": training_args.weight_decay,
        "betas": (training_args.adam_beta1, training_args.adam_beta2),
        "eps": training_args.adam_epsilon,
    }
    if layerwise:
        # The Trainer builds its optimiser from these groups in place of its own (its documented "params").
        kwargs["params"] = layerwise_parameter_groups(
            model, training_args.learning_rate, model_args.layer_learning_rate_decay, training_args.weight_decay, decayed_names
        )
    return optimizer_class, kwargs


__all__ = ["layerwise_parameter_groups", "optimizer_cls_and_kwargs"]

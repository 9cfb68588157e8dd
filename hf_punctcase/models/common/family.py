"""What a model family is, in one entry: its config and model classes, how training builds a new model
of it, and how a model card describes it. :data:`hf_punctcase.models.FAMILIES` lists the entries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelFamily:
    """One model family.

    Attributes:
        name: the name ``--model_family`` takes (``"joint_transformer"``).
        config_class: its ``PreTrainedConfig`` (whose ``model_type`` names it in config.json).
        model_class: its model, answering ``forward(input_ids, attention_mask)`` with a
            :class:`~hf_punctcase.models.common.modeling.JointTokenClassifierOutput`.
        new_model: ``new_model(model_args, scheme, lexicon, punct_loss_weight)`` → ``(model, tokenizer,
            source)``: the model a training run starts from when it is not given a checkpoint, its
            tokenizer, and where it came from in words (for the run's record and card).
        describe: ``describe(config)`` → the model in words for its card, from a config.json as a dict.
    """

    name: str
    config_class: type
    model_class: type
    new_model: Callable[..., tuple[Any, Any, str]]
    describe: Callable[[dict], str]

    @property
    def model_type(self) -> str:
        return self.config_class.model_type


__all__ = ["ModelFamily"]

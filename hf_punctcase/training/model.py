"""The model a training run trains: a checkpoint to go on training, or a new one of a family, made
ready as the run asks (trainable parameters, int8-storage rounding, LoRA)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from transformers import AutoConfig, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from ..auto import AutoModelForJointTokenClassification
from ..checkpoints import resolve
from ..labels import LabelScheme
from ..models import FAMILIES
from ..models.joint_transformer import JointTokenClassificationConfig
from ..quantization import simulate_int8_storage
from ..tasks import head_tasks
from .arguments import ModelArguments

logger = logging.getLogger(__name__)


def build_model(
    model_args: ModelArguments, scheme: LabelScheme, lexicon: dict[str, str]
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """The model to train, its tokenizer, and where it came from (the checkpoint as named, the encoder
    folder, or what a family's ``new_model`` says of a model trained from scratch)."""
    if model_args.model_name_or_path:
        # "default" is the model shipped inside the package, not a Hub id.
        path = resolve(model_args.model_name_or_path).location
        config = AutoConfig.from_pretrained(path, trust_remote_code=False)
        for flag, task in model_args.requested_heads().items():
            if config.model_type != JointTokenClassificationConfig.model_type:
                raise ValueError(f"--{flag} is for the joint transformer, not a {config.model_type} checkpoint")
            # A head the checkpoint lacks is initialised; one it has keeps its weights.
            setattr(config, task.config_field, list(task.labels))
        if model_args.disfluency_head:
            config.head_dependency = model_args.head_dependency
        if model_args.command_branch_layers:
            if config.model_type != JointTokenClassificationConfig.model_type or getattr(config, "command_labels", None) is None:
                raise ValueError("--command_branch_layers needs a joint transformer with a spoken-command head (--command_head)")
            # A checkpoint without the branch gets it as copies of its encoder's top layers.
            config.command_branch_layers = model_args.command_branch_layers
        model = AutoModelForJointTokenClassification.from_pretrained(path, config=config, trust_remote_code=False)
        family = model_args.model_family
        if family is not None and FAMILIES[family].model_type != model.config.model_type:
            raise ValueError(
                f"--model_family {family} but {model_args.model_name_or_path} is a {model.config.model_type} checkpoint"
            )
        if model_args.config_overrides:
            raise ValueError("--config_overrides applies to a model trained from scratch, not to a checkpoint")
        # A later stage may see words the first did not: the lexicon is the union, new forms winning.
        model.config.mixed_case_lexicon = {**(model.config.mixed_case_lexicon or {}), **lexicon}
        # The loss options are this run's, whatever the checkpoint was trained with.
        model.config.punct_loss_weight = _punct_loss_weight(model_args, type(model.config))
        model.config.label_smoothing = model_args.label_smoothing
        model.config.punct_class_weights = model_args.punct_class_weights
        if isinstance(model.config, JointTokenClassificationConfig):
            model.config.case_loss_weight = model_args.case_loss_weight
            # What the checkpoint runs best as was measured on its weights, not on the ones trained now.
            model.config.preferred_cpu_runtime = None
            for task in head_tasks(model.config):
                setattr(model.config, task.loss_weight_field, getattr(model_args, task.loss_weight_field))
        model.config.validate_loss_options()
        return model, AutoTokenizer.from_pretrained(path), str(model_args.model_name_or_path)
    family = FAMILIES[model_args.model_family or "joint_transformer"]
    return family.new_model(model_args, scheme, lexicon, _punct_loss_weight(model_args, family.config_class))


def freeze_except(model: PreTrainedModel, prefixes: Sequence[str]) -> int:
    """Freeze every parameter whose name starts with none of ``prefixes``; returns how many parameters
    still train (a prefix that names none is an error: a typo would train nothing)."""
    names = [name for name, _ in model.named_parameters()]
    for prefix in prefixes:
        if not any(name.startswith(prefix) for name in names):
            raise ValueError(f"--trainable_parameters {prefix!r} names no parameter of the model")
    trained = 0
    for name, parameter in model.named_parameters():
        parameter.requires_grad = any(name.startswith(prefix) for prefix in prefixes)
        trained += parameter.numel() if parameter.requires_grad else 0
    logger.info("training %d of %d parameters (%s)", trained, sum(p.numel() for p in model.parameters()), ", ".join(prefixes))
    return trained


def _punct_loss_weight(model_args: ModelArguments, config_class: type) -> float:
    """α as asked for, else the family's default (its config class's)."""
    return config_class.punct_loss_weight if model_args.punct_loss_weight is None else model_args.punct_loss_weight


def prepared_model(
    model_args: ModelArguments, scheme: LabelScheme, lexicon: dict[str, str]
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """:func:`build_model`, then what the run asks of it: only ``trainable_parameters`` trained, int8
    storage simulated (``quantization_aware_training``), LoRA adapters added (``lora_r``)."""
    model, tokenizer, source = build_model(model_args, scheme, lexicon)
    if model_args.trainable_parameters:
        freeze_except(model, model_args.trainable_parameters)
    if model_args.quantization_aware_training:
        if model.config.model_type != JointTokenClassificationConfig.model_type:
            raise ValueError(f"--quantization_aware_training is for the joint transformer, not {model.config.model_type}")
        logger.info("computing with %d weight matrices rounded as int8 storage rounds them", simulate_int8_storage(model))
    if model_args.lora_r:
        from .lora import add_lora

        model = add_lora(model, model_args.lora_r, model_args.lora_alpha, model_args.lora_dropout, model_args.lora_target_modules)
        model.print_trainable_parameters()
    return model, tokenizer, source


__all__ = ["build_model", "freeze_except", "prepared_model"]

"""LoRA finetuning with PEFT: adapters on the encoder's attention, both heads trained in full."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..models.joint_transformer import JointTokenClassificationModel

HEAD_MODULES = ("punct_classifier", "case_classifier")

#: The attention projections LoRA adapts, by encoder model type (query and value, as in the LoRA paper).
DEFAULT_TARGET_MODULES = {"bert": ("query", "value"), "mpnet": ("q", "v"), "roberta": ("query", "value")}


def add_lora(
    model: JointTokenClassificationModel,
    r: int = 8,
    alpha: int = 16,
    dropout: float = 0.1,
    target_modules: Sequence[str] | None = None,
):
    """Wrap ``model`` in a PeftModel: LoRA on the encoder's query/value projections, heads saved whole
    (``modules_to_save``), everything else frozen."""
    LoraConfig, get_peft_model = _peft("LoraConfig", "get_peft_model")

    if target_modules is None:
        encoder_type = model.config.encoder.model_type
        if encoder_type not in DEFAULT_TARGET_MODULES:
            raise ValueError(f"no default LoRA target modules for encoder type {encoder_type!r}; pass target_modules")
        target_modules = DEFAULT_TARGET_MODULES[encoder_type]
    config = LoraConfig(
        r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules), modules_to_save=list(HEAD_MODULES)
    )
    return get_peft_model(model, config)


def load_lora(base: JointTokenClassificationModel | str | os.PathLike, adapter_dir: str | os.PathLike):
    """The base model (or checkpoint path) with the saved adapters and heads of ``adapter_dir``."""
    (PeftModel,) = _peft("PeftModel")

    if not isinstance(base, JointTokenClassificationModel):
        base = JointTokenClassificationModel.from_pretrained(base)
    return PeftModel.from_pretrained(base, adapter_dir)


def _peft(*names: str) -> tuple:
    """PEFT's ``names``, or an ImportError that says which extra installs it (LoRA is training's alone)."""
    try:
        import peft
    except ImportError as error:
        raise ImportError(f"LoRA needs PEFT: pip install 'hf_punctcase[train]' (with -c constraints.txt) ({error})") from None
    return tuple(getattr(peft, name) for name in names)


def merge_lora(peft_model) -> JointTokenClassificationModel:
    """Fold the adapters into the weights: a plain JointTokenClassificationModel, saved and served
    like any other checkpoint (no PEFT needed to load it)."""
    return peft_model.merge_and_unload()

"""Model families, one sub-package each (``configuration.py``, ``modeling.py`` and ``family.py``, its
entry), listed in :data:`FAMILIES`; what they share lives in :mod:`~hf_punctcase.models.common`.

Every family's model answers ``forward(input_ids, attention_mask)`` with an output that has one logits
field per task head (``punct_logits``, ``case_logits``, ...), so that one backend
(:mod:`hf_punctcase.pipelines.backends`) and one restoration path serve them all. A new family is a
sub-package with those three files and its entry here.
"""

from __future__ import annotations

from .cnn_bilstm import CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
from .cnn_bilstm.family import FAMILY as CNN_BILSTM
from .common.family import ModelFamily
from .joint_transformer import JointTokenClassificationConfig, JointTokenClassificationModel
from .joint_transformer.family import FAMILY as JOINT_TRANSFORMER

#: Every family, by the name ``--model_family`` takes.
FAMILIES: dict[str, ModelFamily] = {family.name: family for family in (JOINT_TRANSFORMER, CNN_BILSTM)}
#: model_type → (config class, model class), for transformers' auto classes.
MODEL_FAMILIES: dict[str, tuple[type, type]] = {
    family.model_type: (family.config_class, family.model_class) for family in FAMILIES.values()
}


def family_of(model_type: str | None) -> ModelFamily | None:
    """The family whose config has this ``model_type`` (None for another type)."""
    return next((family for family in FAMILIES.values() if family.model_type == model_type), None)


__all__ = [
    "FAMILIES",
    "MODEL_FAMILIES",
    "CnnBiLstmConfig",
    "CnnBiLstmForJointTokenClassification",
    "JointTokenClassificationConfig",
    "JointTokenClassificationModel",
    "ModelFamily",
    "family_of",
]

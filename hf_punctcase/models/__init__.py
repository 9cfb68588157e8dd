"""Model families, one sub-package each (``configuration.py`` + ``modeling.py``), registered by their
config's ``model_type`` in :data:`MODEL_FAMILIES`.

Every family's model answers ``forward(input_ids, attention_mask)`` with an output that has one logits
field per task head (``punct_logits``, ``case_logits``, ...), so that one backend
(:mod:`hf_punctcase.pipelines.backends`) and one restoration path serve them all.
"""

from __future__ import annotations

from .cnn_bilstm import CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
from .joint_transformer import JointTokenClassificationConfig, JointTokenClassificationModel

#: model_type → (config class, model class).
MODEL_FAMILIES: dict[str, tuple[type, type]] = {
    JointTokenClassificationConfig.model_type: (JointTokenClassificationConfig, JointTokenClassificationModel),
    CnnBiLstmConfig.model_type: (CnnBiLstmConfig, CnnBiLstmForJointTokenClassification),
}
#: The family of each name the training arguments take (``--model_family``).
FAMILY_NAMES: dict[str, str] = {
    "joint_transformer": JointTokenClassificationConfig.model_type,
    "cnn_bilstm": CnnBiLstmConfig.model_type,
}

__all__ = [
    "FAMILY_NAMES",
    "MODEL_FAMILIES",
    "CnnBiLstmConfig",
    "CnnBiLstmForJointTokenClassification",
    "JointTokenClassificationConfig",
    "JointTokenClassificationModel",
]

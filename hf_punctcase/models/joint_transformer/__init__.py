"""The joint transformer family: any pretrained encoder with a punctuation head and a casing head that
reads the punctuation softmax (Sunkara et al. 2020)."""

from .configuration import JointTokenClassificationConfig
from .modeling import (
    JointTokenClassificationModel,
    JointTokenClassificationPreTrainedModel,
    truncated_encoder_config,
)

__all__ = [
    "JointTokenClassificationConfig",
    "JointTokenClassificationModel",
    "JointTokenClassificationPreTrainedModel",
    "truncated_encoder_config",
]

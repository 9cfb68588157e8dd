"""hf_punctcase: punctuation and truecasing restoration for ASR transcripts, as a transformers plugin.

Importing the package registers the ``joint_token_classification`` model type with the auto classes,
``transformers.AutoModelForJointTokenClassification`` and the ``"punct-case"`` pipeline task.
"""

from .auto import AutoModelForJointTokenClassification, register
from .labels import LabelScheme, LabeledWords, build_mixed_case_lexicon
from .models.joint_transformer import (
    JointTokenClassificationConfig,
    JointTokenClassificationModel,
    JointTokenClassifierOutput,
)
from .pipelines import PunctCasePipeline
from .registry import DEFAULT_MODEL_DIR, TASK, check_model_dir, default_model_path, load_pipeline, register_pipeline
from .streaming import StreamingRestorer

register()
register_pipeline()

__version__ = "0.1.0"

__all__ = [
    "AutoModelForJointTokenClassification",
    "JointTokenClassificationConfig",
    "JointTokenClassificationModel",
    "JointTokenClassifierOutput",
    "DEFAULT_MODEL_DIR",
    "LabelScheme",
    "LabeledWords",
    "PunctCasePipeline",
    "StreamingRestorer",
    "TASK",
    "build_mixed_case_lexicon",
    "check_model_dir",
    "default_model_path",
    "load_pipeline",
]

"""hf_punctcase: punctuation and truecasing restoration for ASR transcripts, as a transformers plugin.

Importing the package registers its model types (``joint_token_classification``,
``cnn_bilstm_punct_case``) with transformers' auto classes and the ``"punct-case"`` pipeline task with its
pipeline registry, and changes nothing else of transformers. :class:`AutoModelForJointTokenClassification`
is this package's.

Where torch or transformers is not installed (an on-device install with ONNX Runtime, tokenizers and
NumPy only), the plugin is skipped and the torch-free parts remain: the labels, the restoration
functions and :mod:`hf_punctcase.runtime`.
"""

from .embedded import ACCURATE_MODEL_DIR, DEFAULT_MODEL_DIR, EMBEDDED_MODELS, ON_DEVICE_MODEL_DIR
from .labels import LabelScheme, LabeledWords, build_mixed_case_lexicon
from .restoration import RestoreOptions
from .hardware import installed as _installed
from .tasks import Task, TaskOption, register_task, tasks_of

# The built-in head tasks (disfluencies, spoken commands, paragraphs) register from their own modules;
# the core imports none of them.
from . import options as _options  # noqa: F401

#: Whether torch and transformers are installed, so that the transformers plugin is registered.
PLUGIN_AVAILABLE = _installed("torch") and _installed("transformers")

from .version import __version__

if PLUGIN_AVAILABLE:
    from .quantization import quiet_torchao_import_noise

    # transformers imports torchao wherever it is installed (the quantize extra), which logs warnings
    # about its CUDA kernels on every CPU-only machine; the plugin itself never needs it to load a model.
    quiet_torchao_import_noise()

    from .auto import AutoModelForJointTokenClassification, register
    from .models.cnn_bilstm import CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
    from .models.common.modeling import JointTokenClassifierOutput
    from .models.joint_transformer import JointTokenClassificationConfig, JointTokenClassificationModel
    from .execution import ExecutionPlan
    from .hardware import Hardware, detect_hardware
    from .loading import plan_execution
    from .pipelines import PunctCasePipeline
    from .checkpoints import ResolvedModel, check_model_dir, resolve
    from .registry import PIPELINE_TASK, default_model_path, load_pipeline, register_pipeline

    register()
    register_pipeline()

    #: Names imported on first use (PEP 562), not with the package: what registering needs is above.
    _LAZY = {
        "StreamingRestorer": ".streaming",
        "Restorer": ".datasets_restore",
        "restore_dataset": ".datasets_restore",
    }

    __all__ = [
        "ACCURATE_MODEL_DIR",
        "AutoModelForJointTokenClassification",
        "CnnBiLstmConfig",
        "CnnBiLstmForJointTokenClassification",
        "JointTokenClassificationConfig",
        "JointTokenClassificationModel",
        "JointTokenClassifierOutput",
        "DEFAULT_MODEL_DIR",
        "EMBEDDED_MODELS",
        "ExecutionPlan",
        "Hardware",
        "LabelScheme",
        "LabeledWords",
        "PLUGIN_AVAILABLE",
        "PunctCasePipeline",
        "ResolvedModel",
        "RestoreOptions",
        "Restorer",
        "StreamingRestorer",
        "PIPELINE_TASK",
        "Task",
        "TaskOption",
        "build_mixed_case_lexicon",
        "check_model_dir",
        "default_model_path",
        "detect_hardware",
        "load_pipeline",
        "plan_execution",
        "register_task",
        "resolve",
        "restore_dataset",
        "tasks_of",
        "ON_DEVICE_MODEL_DIR",
    ]
else:
    # Without torch: the torch-free runtime (hf_punctcase.runtime.OnDeviceRestorer) and a stream over it.
    _LAZY = {"StreamingRestorer": ".streaming"}

    __all__ = [
        "ACCURATE_MODEL_DIR",
        "DEFAULT_MODEL_DIR",
        "EMBEDDED_MODELS",
        "LabelScheme",
        "LabeledWords",
        "ON_DEVICE_MODEL_DIR",
        "PLUGIN_AVAILABLE",
        "RestoreOptions",
        "StreamingRestorer",
        "Task",
        "TaskOption",
        "build_mixed_case_lexicon",
        "register_task",
        "tasks_of",
    ]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

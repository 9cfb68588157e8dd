"""hf_punctcase: punctuation and truecasing restoration for ASR transcripts, as a transformers plugin.

Importing the package registers its model types (``joint_token_classification``,
``cnn_bilstm_punct_case``) with transformers' auto classes and the ``"punct-case"`` pipeline task with its
pipeline registry, and changes nothing else of transformers. :class:`AutoModelForJointTokenClassification`
is this package's.

Where torch or transformers is not installed (an on-device install with ONNX Runtime, tokenizers and
NumPy only), the plugin is skipped and the torch-free parts remain: the labels, the restoration
functions and :mod:`hf_punctcase.runtime`.
"""

from .embedded import ACCURATE_MODEL_DIR, DEFAULT_MODEL_DIR, EMBEDDED_MODELS, ON_DEVICE_MODEL_DIR, OPEN_MODEL_DIR
from .restoration import RestoreOptions
from .hardware import installed as _installed

# The built-in head tasks (disfluencies, spoken commands, paragraphs) register from their own modules;
# the core imports none of them.
from . import options as _options  # noqa: F401

#: Whether torch and transformers are installed, so that the transformers plugin is registered.
PLUGIN_AVAILABLE = _installed("torch") and _installed("transformers")

from .version import __version__

#: Names that were importable from the top level and now live in their modules only: each keeps
#: working here, with a FutureWarning that names its place, until the next release.
_MOVED = {
    "LabelScheme": "labels",
    "LabeledWords": "labels",
    "build_mixed_case_lexicon": "labels",
    "Task": "tasks",
    "TaskOption": "tasks",
    "register_task": "tasks",
    "tasks_of": "tasks",
}

if PLUGIN_AVAILABLE:
    from .quantization import quiet_torchao_import_noise as _quiet_torchao_import_noise

    # transformers imports torchao wherever it is installed (the quantize extra), which logs warnings
    # about its CUDA kernels on every CPU-only machine; the plugin itself never needs it to load a model.
    _quiet_torchao_import_noise()

    from .auto import AutoModelForJointTokenClassification
    from .auto import register as _register_models
    from .models.cnn_bilstm import CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
    from .models.joint_transformer import JointTokenClassificationConfig, JointTokenClassificationModel
    from .pipelines import PunctCasePipeline
    from .registry import load_pipeline
    from .registry import register_pipeline as _register_pipeline

    _register_models()
    _register_pipeline()

    _MOVED.update({
        "ExecutionPlan": "execution",
        "Hardware": "hardware",
        "detect_hardware": "hardware",
        "plan_execution": "loading",
        "ResolvedModel": "checkpoints",
        "check_model_dir": "checkpoints",
        "resolve": "checkpoints",
        "PIPELINE_TASK": "registry",
        "default_model_path": "registry",
        "JointTokenClassifierOutput": "models.common.modeling",
    })

    #: Names imported on first use (PEP 562), not with the package: what registering needs is above.
    _LAZY = {
        "StreamingRestorer": ".streaming",
        "Restorer": ".datasets_restore",
        "restore_dataset": ".datasets_restore",
    }

    __all__ = [
        "ACCURATE_MODEL_DIR",
        "DEFAULT_MODEL_DIR",
        "EMBEDDED_MODELS",
        "ON_DEVICE_MODEL_DIR",
        "OPEN_MODEL_DIR",
        "PLUGIN_AVAILABLE",
        "AutoModelForJointTokenClassification",
        "CnnBiLstmConfig",
        "CnnBiLstmForJointTokenClassification",
        "JointTokenClassificationConfig",
        "JointTokenClassificationModel",
        "PunctCasePipeline",
        "RestoreOptions",
        "Restorer",
        "StreamingRestorer",
        "load_pipeline",
        "restore_dataset",
    ]
else:
    # Without torch: the torch-free runtime (hf_punctcase.runtime.OnDeviceRestorer) and a stream over it.
    _LAZY = {"StreamingRestorer": ".streaming"}

    __all__ = [
        "ACCURATE_MODEL_DIR",
        "DEFAULT_MODEL_DIR",
        "EMBEDDED_MODELS",
        "ON_DEVICE_MODEL_DIR",
        "OPEN_MODEL_DIR",
        "PLUGIN_AVAILABLE",
        "RestoreOptions",
        "StreamingRestorer",
    ]


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    if name in _MOVED:
        from .moved import moved_name

        return moved_name(__name__, name, f"{__name__}.{_MOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

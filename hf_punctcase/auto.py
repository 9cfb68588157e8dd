"""`AutoModelForJointTokenClassification` and the registrations that make the model type known to
transformers' auto classes (AutoConfig, AutoModel, AutoModelForTokenClassification)."""

from __future__ import annotations

import importlib
import sys
from collections import OrderedDict

from transformers import AutoConfig, AutoModel, AutoModelForTokenClassification
from transformers.models import auto as transformers_auto
from transformers.models.auto.auto_factory import _BaseAutoModelClass, _LazyAutoMapping
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

from .export.remote_code import RemoteCodeExporter
from .models import MODEL_FAMILIES

MODEL_FOR_JOINT_TOKEN_CLASSIFICATION_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, OrderedDict())


class AutoModelForJointTokenClassification(_BaseAutoModelClass):
    """Auto class for joint punctuation + casing token classifiers (one model per config type)."""

    _model_mapping = MODEL_FOR_JOINT_TOKEN_CLASSIFICATION_MAPPING


def register() -> None:
    """Idempotent: make every model family's config and model known to transformers' auto classes,
    and have saved checkpoints carry the code that loads them without the plugin."""
    for model_type, (config_class, model_class) in MODEL_FAMILIES.items():
        if model_type not in transformers_auto.configuration_auto.CONFIG_MAPPING:
            AutoConfig.register(model_type, config_class)
        for auto_class in (AutoModelForJointTokenClassification, AutoModelForTokenClassification, AutoModel):
            if config_class not in auto_class._model_mapping:
                auto_class.register(config_class, model_class)
        model_class.remote_code_exporter = RemoteCodeExporter
    # `transformers.AutoModelForJointTokenClassification` looks here. The first import of
    # transformers.pipelines replaces the lazy `transformers` module object in sys.modules, so import
    # it first and set the attribute on the module that is current.
    importlib.import_module("transformers.pipelines")
    setattr(transformers_auto, AutoModelForJointTokenClassification.__name__, AutoModelForJointTokenClassification)
    setattr(sys.modules["transformers"], AutoModelForJointTokenClassification.__name__, AutoModelForJointTokenClassification)

"""`AutoModelForJointTokenClassification` and the registrations that make the model types known to
transformers' auto classes (AutoConfig, AutoModel, AutoModelForTokenClassification). Registration adds
entries through transformers' own ``register`` methods and changes nothing else of transformers."""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from typing import Any

from transformers import AutoConfig, AutoModel, AutoModelForTokenClassification
from transformers.models import auto as transformers_auto
from transformers.models.auto.auto_factory import _BaseAutoModelClass, _LazyAutoMapping
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

from .checkpoints import checked_format, looks_local
from .execution import TORCH, check_dtype
from .export.remote_code import RemoteCodeExporter
from .formats import format_of
from .loading import cached_cpu_model, planned_model
from .models import MODEL_FAMILIES
from .pipelines.punct_case import LOADED_FOR_PIPELINE, PIPELINE_TASK

MODEL_FOR_JOINT_TOKEN_CLASSIFICATION_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, OrderedDict())


class AutoModelForJointTokenClassification(_BaseAutoModelClass):
    """Auto class for joint punctuation + casing token classifiers (one model per config type).

    ``from_pretrained`` on a folder of another runtime's format (an ONNX export: ``model.onnx`` and no
    torch weights; an OpenVINO export: ``openvino_model.xml``) returns that runtime's model
    (:class:`~hf_punctcase.formats.onnx.OnnxModel`, :class:`~hf_punctcase.formats.openvino.OpenVinoModel`),
    as Optimum's classes do, so that ``pipeline("punct-case", model=export_folder)`` runs it. For the
    pipeline, ``runtime`` (``model_kwargs={"runtime": "openvino"}``) asks for a runtime other than the
    plan's (:func:`hf_punctcase.loading.plan_execution`)."""

    _model_mapping = MODEL_FOR_JOINT_TOKEN_CLASSIFICATION_MAPPING

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, *model_args: Any, **kwargs: Any):
        for_pipeline = kwargs.get("_from_pipeline") == PIPELINE_TASK
        local = isinstance(pretrained_model_name_or_path, (str, os.PathLike)) and looks_local(str(pretrained_model_name_or_path))
        found = None
        if for_pipeline and local:
            # What load_pipeline checks first (transformers' pipeline reports it inside its own error).
            check_dtype(kwargs.get("dtype"))
            found = checked_format(pretrained_model_name_or_path, trust_remote_code=bool(kwargs.get("trust_remote_code")))
        elif local:
            found = format_of(pretrained_model_name_or_path)
        threads = kwargs.pop("intra_op_num_threads", None) if found is None or found.runtime == TORCH else None
        runtime = kwargs.pop("runtime", None) if for_pipeline else None
        model = None
        if found is not None and found.runtime != TORCH:
            if model_args:
                raise TypeError(f"{pretrained_model_name_or_path} is {found.description}: from_pretrained takes no model arguments")
            model = found.load_model(str(pretrained_model_name_or_path), **kwargs)
        elif for_pipeline and found is not None and kwargs.get("dtype") in (None, "auto") and kwargs.get("device_map") is None:
            # Where the plan needs no torch model (the cached int8 graph on a CPU-only machine), none is loaded.
            model = cached_cpu_model(pretrained_model_name_or_path, intra_op_num_threads=threads, runtime=runtime)
        if model is None:
            model = super().from_pretrained(pretrained_model_name_or_path, *model_args, **kwargs)
        if for_pipeline:
            planner = functools.partial(
                planned_model, source=str(pretrained_model_name_or_path), intra_op_num_threads=threads, runtime=runtime
            )
            setattr(model, LOADED_FOR_PIPELINE, planner)
        return model

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

__all__ = ["AutoModelForJointTokenClassification", "register"]

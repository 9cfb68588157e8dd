"""The ``"punct-case"`` pipeline task: its registration with transformers, and :func:`load_pipeline`,
the library's own entry point.

Registration goes through ``PIPELINE_REGISTRY`` alone: transformers' ``pipeline`` stays the function
it is, and ``pipeline("punct-case", model=folder)`` loads any checkpoint or ONNX export folder (the
embedded ones too: :data:`~hf_punctcase.DEFAULT_MODEL_DIR`, :data:`~hf_punctcase.ACCURATE_MODEL_DIR`,
:data:`~hf_punctcase.ON_DEVICE_MODEL_DIR`, :data:`~hf_punctcase.OPEN_MODEL_DIR`)
through :class:`~hf_punctcase.AutoModelForJointTokenClassification`, whatever the order of imports.
The pipeline then runs the model as planned (:mod:`hf_punctcase.loading`).

:func:`load_pipeline` also takes the embedded models' names (``"default"``, ``"accurate"``, ``"on-device"``, ``"open"``), checks
a folder once before anything loads (one error naming the folder and the fault), and never asks
whether to run a folder's code: ``trust_remote_code`` is False unless the caller sets it.
"""

from __future__ import annotations

import os
from typing import Any

from transformers.pipelines import PIPELINE_REGISTRY

from .auto import AutoModelForJointTokenClassification
from .checkpoints import ResolvedModel, check_model_dir, resolve
from .embedded import DEFAULT_MODEL_DIR
from .execution import check_dtype, check_runtime
from .pipelines import PIPELINE_TASK, PunctCasePipeline


def default_model_path() -> str:
    """Path of the embedded default model, checked for completeness."""
    return check_model_dir(DEFAULT_MODEL_DIR)


def load_pipeline(
    model: str | os.PathLike | ResolvedModel | None = None,
    *,
    trust_remote_code: bool = False,
    intra_op_num_threads: int | None = None,
    runtime: str | None = None,
    **kwargs: Any,
) -> PunctCasePipeline:
    """``pipeline("punct-case", model=...)`` with a checked checkpoint and no prompt.

    ``model`` is a local checkpoint folder (torch weights or an ONNX export; checked once by
    :func:`~hf_punctcase.checkpoints.resolve`), a Hub repo id, or None / ``"default"`` / ``"accurate"`` /
    ``"on-device"`` / ``"open"`` for an embedded model. ``trust_remote_code`` is passed to transformers as given (False by default),
    so that code from a model folder runs only when asked for and transformers never asks on stdin.
    ``intra_op_num_threads``: ONNX Runtime's threads per operator (OpenVINO's threads), where the model
    runs with it. ``runtime``: ``"torch"``, ``"onnxruntime"`` or ``"openvino"`` instead of the plan's
    (None or ``"auto"``: the plan's).
    Other keyword arguments go to transformers' ``pipeline()``; unless ``dtype`` is given, the model
    runs as planned (:func:`hf_punctcase.loading.plan_execution`; the pipeline's ``execution_plan`` says how).
    """
    from transformers import pipeline

    check_dtype(kwargs.get("dtype"))
    resolved = resolve(model, trust_remote_code=trust_remote_code)
    if intra_op_num_threads is not None:
        kwargs["model_kwargs"] = {**kwargs.get("model_kwargs", {}), "intra_op_num_threads": intra_op_num_threads}
    check_runtime(runtime)  # before anything loads (the plan checks it against the model when it runs)
    if runtime not in (None, "auto"):
        kwargs["model_kwargs"] = {**kwargs.get("model_kwargs", {}), "runtime": runtime}
    return pipeline(PIPELINE_TASK, model=resolved.location, trust_remote_code=trust_remote_code, **kwargs)


def register_pipeline() -> None:
    """Register the task (idempotent); ``pipeline("punct-case")`` with no model loads the embedded default."""
    if PIPELINE_TASK in PIPELINE_REGISTRY.get_supported_tasks() and PIPELINE_REGISTRY.supported_tasks[PIPELINE_TASK]["impl"] is PunctCasePipeline:
        return
    PIPELINE_REGISTRY.register_pipeline(
        PIPELINE_TASK,
        pipeline_class=PunctCasePipeline,
        pt_model=AutoModelForJointTokenClassification,
        default={"model": (str(DEFAULT_MODEL_DIR), None)},
        type="text",
    )


__all__ = ["PIPELINE_TASK", "check_dtype", "default_model_path", "load_pipeline", "register_pipeline"]

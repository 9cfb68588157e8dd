"""The ``"punct-case"`` pipeline task: :func:`load_pipeline`, the task's registration with transformers,
and ``transformers.pipeline`` made to load embedded names and check folders.

Every loader resolves ``model`` once with :func:`hf_punctcase.checkpoints.resolve` (embedded name,
folder or Hub id; a folder checked and its format found), plans how it runs
(:func:`hf_punctcase.hardware.plan_execution`), and hands the folder to its format
(:mod:`hf_punctcase.formats`), which loads the pipeline. Loading never asks whether to run a folder's
own code: ``trust_remote_code`` is passed to transformers explicitly, False unless the caller sets it.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from typing import Any

from transformers.pipelines import PIPELINE_REGISTRY

from .auto import AutoModelForJointTokenClassification
from .checkpoints import ResolvedModel, check_model_dir, resolve
from .faults import one_line
from .embedded import DEFAULT_MODEL_DIR
from .execution import DTYPE_NAMES, ONNXRUNTIME, TORCH, ExecutionPlan
from .formats import format_named
from .formats.torch import transformers_pipeline
from .hardware import plan_execution
from .pipelines import TASK, PunctCasePipeline
from .pipelines.punct_case import check_model_object


def check_dtype(dtype: Any) -> None:
    """Raise unless ``dtype`` is None, one of :data:`DTYPE_NAMES` or the torch dtype of one: torch would
    answer a misspelt name with an AttributeError from deep inside loading, and take a number silently."""
    import torch

    if dtype is None or (isinstance(dtype, torch.dtype) and str(dtype).removeprefix("torch.") in DTYPE_NAMES):
        return
    if not isinstance(dtype, (str, torch.dtype)):
        raise TypeError(f"dtype must be one of {', '.join(DTYPE_NAMES)} (a name or a torch.dtype), not {type(dtype).__name__} {dtype!r}")
    if str(dtype).removeprefix("torch.") not in DTYPE_NAMES:
        raise ValueError(f"dtype {str(dtype)!r} is not one of {', '.join(DTYPE_NAMES)}")


def default_model_path() -> str:
    """Path of the embedded default model, checked for completeness."""
    return check_model_dir(DEFAULT_MODEL_DIR)


def load_pipeline(
    model: str | os.PathLike | ResolvedModel | None = None, *, trust_remote_code: bool = False, **kwargs: Any
) -> PunctCasePipeline:
    """``pipeline("punct-case", model=...)`` with a checked checkpoint and no prompt.

    ``model`` is a local checkpoint folder (torch weights or an ONNX export; checked once by
    :func:`~hf_punctcase.checkpoints.resolve`), a Hub repo id, or None / ``"default"`` / ``"on-device"``
    for an embedded model. ``trust_remote_code`` is passed to transformers as given (False by default),
    so that code from a model folder runs only when asked for and transformers never asks on stdin.
    Other keyword arguments go to ``pipeline()``; unless ``dtype`` is given, the model runs as
    :func:`~hf_punctcase.hardware.plan_execution` plans (the pipeline's ``execution_plan`` says how).
    """
    check_dtype(kwargs.get("dtype"))
    resolved = resolve(model, trust_remote_code=trust_remote_code)
    return _load(resolved, {"trust_remote_code": trust_remote_code, **kwargs}, transformers_pipeline())


def _load(resolved: ResolvedModel, arguments: dict[str, Any], load_from_hub) -> PunctCasePipeline:
    """The pipeline over a resolved model: the plan picks the dtype or the folder of the int8 graph,
    the folder's format loads it, and ``load_from_hub`` (transformers' ``pipeline``) a Hub repo id."""
    resolved, plan = _apply_plan(resolved, arguments)
    if resolved.format is not None:
        pipe = resolved.format.load_pipeline(resolved.location, task=TASK, **arguments)
    else:
        pipe = load_from_hub(TASK, model=resolved.location, **arguments)
    if isinstance(pipe, PunctCasePipeline) and plan is not None:
        pipe.execution_plan = plan
    return pipe


def register_pipeline() -> None:
    """Register the task; ``pipeline("punct-case")`` with no model loads the embedded default.

    ``transformers.pipeline`` is also wrapped (:func:`_checked_pipeline`): transformers has no hook
    between the model name and its download, and the wrapper is where ``"default"`` and ``"on-device"``
    become folders, local folders are checked once, and ``trust_remote_code`` defaults to False."""
    _install_checked_pipeline()
    if TASK in PIPELINE_REGISTRY.get_supported_tasks() and PIPELINE_REGISTRY.supported_tasks[TASK]["impl"] is PunctCasePipeline:
        return
    PIPELINE_REGISTRY.register_pipeline(
        TASK,
        pipeline_class=PunctCasePipeline,
        pt_model=AutoModelForJointTokenClassification,
        default={"model": (str(DEFAULT_MODEL_DIR), None)},
        type="text",
    )


def _checked_pipeline(original):
    """``original`` (transformers' ``pipeline``), which for the punct-case task loads ``model`` as
    :func:`load_pipeline` does: an embedded name or a local folder resolved and checked once
    (``model="/nope"`` is a FileNotFoundError naming the path, not transformers' "Repo id must use
    alphanumeric chars"), ``trust_remote_code=False`` when the caller gave none (transformers would
    otherwise ask on stdin for a folder whose model type it does not know), and the model run as
    :func:`~hf_punctcase.hardware.plan_execution` plans when no dtype is given. A model object, and
    every other task, go to ``original`` untouched."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def pipeline(*args: Any, **kwargs: Any):
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)  # let transformers report the bad call
        arguments = dict(bound.arguments)
        if arguments.pop("task", None) != TASK:
            return original(*args, **kwargs)
        arguments.update(arguments.pop("kwargs", {}))
        check_dtype(arguments.get("dtype"))
        model = arguments.pop("model", None)
        if model is not None and not isinstance(model, (str, os.PathLike, ResolvedModel)):
            check_model_object(model)
            return original(*args, **kwargs)
        if arguments.get("trust_remote_code") is None:
            arguments["trust_remote_code"] = False
        return _load(resolve(model, trust_remote_code=arguments["trust_remote_code"]), arguments, original)

    pipeline._punct_case_checked = True
    return pipeline


def _apply_plan(resolved: ResolvedModel, arguments: dict) -> tuple[ResolvedModel, ExecutionPlan | None]:
    """Plan how the pipeline runs ``resolved`` (:func:`~hf_punctcase.hardware.plan_execution`) and set
    the arguments to match: the dtype of a torch plan, or the model of an ONNX Runtime plan (the cached
    int8 graph, :func:`~hf_punctcase.export.cache.int8_graph`). No plan with a ``device_map``, which
    places the model as it says."""
    if arguments.get("device_map") is not None:
        return resolved, None
    dtype = arguments.get("dtype")
    device = arguments.get("device")
    plan = plan_execution(resolved, device=device, dtype=dtype)
    if plan.runtime == ONNXRUNTIME and resolved.runtime != ONNXRUNTIME:
        from .export.cache import built_int8_graph

        try:
            graph = built_int8_graph(resolved)
            resolved = ResolvedModel(resolved.given, str(graph), resolved.source, format_named("onnx"))
        except (ImportError, OSError) as error:
            fallback = plan_execution(resolved, device=device, dtype=dtype, int8_graph=False)
            plan = ExecutionPlan(
                fallback.runtime, fallback.precision, fallback.device,
                f"{fallback.reason} (the int8 graph could not be built: {one_line(error)})",
            )
    if plan.runtime == TORCH and dtype in (None, "auto"):
        arguments["dtype"] = plan.torch_dtype
    return resolved, plan


def _install_checked_pipeline() -> None:
    """Idempotent: put the wrapper where ``from transformers import pipeline`` and
    ``transformers.pipelines.pipeline`` find it (a name imported before this package keeps the
    original, which neither knows the embedded names nor defaults trust_remote_code)."""
    import transformers.pipelines

    if getattr(transformers.pipelines.pipeline, "_punct_case_checked", False):
        return
    wrapped = _checked_pipeline(transformers.pipelines.pipeline)
    transformers.pipelines.pipeline = wrapped
    # The first import of transformers.pipelines replaces the lazy `transformers` module in
    # sys.modules (see auto.register); set the name on the module that is current.
    setattr(sys.modules["transformers"], "pipeline", wrapped)

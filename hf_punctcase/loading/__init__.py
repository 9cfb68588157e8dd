"""Loading, one way down: resolve → artifacts → plan → load.

1. **resolve** (:func:`hf_punctcase.checkpoints.resolve`): what ``model`` names (an embedded name, a
   folder, checked once, or a Hub repo id).
2. **artifacts** (:func:`~hf_punctcase.loading.artifacts.artifacts_of`): what the folder holds to run
   from (its format's runtime, an export's precision, the runtime its config prefers on a CPU).
3. **plan** (:func:`~hf_punctcase.loading.plan.plan`): a pure function of the artifacts, the hardware
   and what the caller asked for.
4. **load**: transformers loads the model (``pipeline("punct-case", ...)`` through
   :class:`~hf_punctcase.AutoModelForJointTokenClassification`), and the pipeline runs it as planned
   (:func:`planned_model`): a dtype, or the checkpoint's int8 graph, which export builds once from
   the model already loaded.

Nothing here calls back into a loader: export is asked for a graph, never the other way round.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..checkpoints import ResolvedModel, resolve
from ..execution import ONNXRUNTIME, OPENVINO, TORCH, ExecutionPlan
from ..faults import one_line
from ..formats import format_of
from ..hardware import Hardware, detect_hardware
from .artifacts import INT8_GRAPH, Artifacts, artifacts_of
from .plan import device_name, plan

logger = logging.getLogger(__name__)


def plan_execution(
    model: str | os.PathLike | ResolvedModel | None = "default",
    *,
    device: Any = None,
    dtype: Any = None,
    hardware: Hardware | None = None,
    int8_graph: bool = True,
    runtime: str | None = None,
) -> ExecutionPlan:
    """The runtime, precision and device the punct-case pipeline uses for ``model`` (an embedded name,
    a checkpoint folder, a Hub repo id, or what :func:`~hf_punctcase.checkpoints.resolve` made of one),
    with ``device``, ``dtype`` and ``runtime`` as given to the loaders: :func:`~hf_punctcase.loading.plan.plan`
    on this machine (``hardware`` defaults to :func:`~hf_punctcase.hardware.detect_hardware`)."""
    return plan(
        artifacts_of(resolve(model)), hardware or detect_hardware(), device=device, dtype=dtype, int8_graph=int8_graph,
        runtime=runtime,
    )


def _artifacts_at(source: str | os.PathLike) -> Artifacts:
    """The artifacts of ``source`` as transformers loaded it: a folder of a known format, or a Hub id."""
    found = format_of(source)
    return artifacts_of(ResolvedModel(source, str(source), "folder" if found is not None else "hub", found))


#: The cache's kind of graph for each runtime a torch checkpoint can be run as instead of torch.
GRAPH_KINDS = {ONNXRUNTIME: "int8", OPENVINO: "openvino"}


def _graph_model(graph, chosen: ExecutionPlan, intra_op_num_threads: int | None, source: str | os.PathLike):
    """The model object that runs a built graph as ``chosen`` plans it. Its ``name_or_path`` is
    ``source``, the checkpoint the graph was built from (what the user asked for), not the cache folder."""
    if chosen.runtime == OPENVINO:
        from ..formats.openvino import OpenVinoModel

        model = OpenVinoModel(graph, precision=chosen.precision, num_threads=intra_op_num_threads)
    else:
        from ..formats.onnx import OnnxModel

        # The graph's cache folder keeps its cuts to a call's tasks too, for the next process.
        model = OnnxModel(graph, intra_op_num_threads=intra_op_num_threads, cut_dir=graph)
    model.name_or_path = str(source)
    if Path(source).is_dir():
        model.source_checkpoint = Path(source)
    return model


def cached_cpu_model(folder: str | os.PathLike, *, intra_op_num_threads: int | None = None, runtime: str | None = None):
    """The model the plan runs for the checkpoint in ``folder`` where that needs no torch model: its
    cached graph (int8 ONNX Runtime, or OpenVINO), on a machine whose only device is the CPU (so the
    pipeline can run nowhere else) and where the plan picks that graph. None otherwise: transformers
    loads the torch model, and :func:`planned_model` decides on its device."""
    import torch

    from ..export.cache import cached_graph

    hardware = detect_hardware()
    if hardware.cuda or torch.backends.mps.is_available() or (hasattr(torch, "xpu") and torch.xpu.is_available()):
        return None
    artifacts = _artifacts_at(folder)
    if artifacts.runtime != TORCH:
        return None
    chosen = plan(artifacts, hardware, runtime=runtime)
    if chosen.runtime not in GRAPH_KINDS:
        return None
    graph = cached_graph(folder, GRAPH_KINDS[chosen.runtime])
    return None if graph is None else _graph_model(graph, chosen, intra_op_num_threads, folder)


def planned_model(
    model,
    tokenizer,
    *,
    source: str,
    device: Any,
    dtype: Any,
    intra_op_num_threads: int | None = None,
    runtime: str | None = None,
) -> tuple[Any, ExecutionPlan]:
    """The model the punct-case pipeline runs and the plan that chose it, for a ``model`` transformers
    loaded from ``source`` (a folder or Hub repo id) onto ``device``, with ``dtype`` and ``runtime`` as
    the caller gave them (None or "auto": not given). A torch model is cast to the planned dtype;
    where the plan is one of the checkpoint's graphs (int8 ONNX Runtime, OpenVINO), the cached graph
    is run (built from ``model`` the first time, unless the auto class loaded it in place of the torch
    model, :func:`cached_cpu_model`), and if it cannot be built the next rule's plan is, saying why."""
    from ..formats.onnx import check_runs_as_exported

    graph_loaded = getattr(model, "runtime", TORCH) != TORCH
    if graph_loaded:
        # transformers falls back to loading with fp32 when a dtype fails, and moves a model to the
        # device after loading it: both are answered here, where they reach the model.
        check_runs_as_exported(source, device=device, dtype=dtype)
    artifacts = _artifacts_at(source)
    hardware = detect_hardware()
    chosen = plan(artifacts, hardware, device=device, dtype=dtype, runtime=runtime)
    if chosen.runtime in GRAPH_KINDS and not graph_loaded:
        from ..export.cache import build_graph

        try:
            graph = build_graph(artifacts.folder, model, tokenizer, GRAPH_KINDS[chosen.runtime])
            return _graph_model(graph, chosen, intra_op_num_threads, source), chosen
        except (ImportError, OSError) as error:
            fallback = plan(artifacts, hardware, device=device, dtype=dtype, int8_graph=False)
            chosen = ExecutionPlan(
                fallback.runtime, fallback.precision, fallback.device,
                f"{fallback.reason} (the {GRAPH_KINDS[chosen.runtime]} graph could not be built: {one_line(error)})",
            )
            logger.warning(
                "the graph of %s could not be built (%s): running %s %s", source, one_line(error), fallback.runtime, fallback.precision
            )
    if chosen.runtime == TORCH and dtype in (None, "auto") and chosen.torch_dtype != model.dtype:
        model = model.to(chosen.torch_dtype)
        # Cast for this CPU, not by the caller: saving writes the checkpoint it was cast from, as a graph
        # the plan picked does, so that the saved model is the same on every CPU.
        model.planned_from = source
    return model, chosen


__all__ = [
    "GRAPH_KINDS", "INT8_GRAPH", "Artifacts", "artifacts_of", "cached_cpu_model", "device_name", "plan", "plan_execution", "planned_model",
]

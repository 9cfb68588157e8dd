"""The OpenVINO backend: runs an OpenVINO graph on the CPU, in the precision the CPU computes fastest in
(bf16 where it has AMX or avx512_bf16, OpenVINO's ``INFERENCE_PRECISION_HINT``; else fp32), with NumPy
and OpenVINO only. :class:`hf_punctcase.formats.openvino.OpenVinoModel` holds one for an OpenVINO
folder and for the default's cached graph.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from .base import INPUT_NAMES, LOGITS_SUFFIX, check_declared_heads, chosen_outputs, run_each_sequence_alone, softmax

#: OpenVINO's names of the precisions a graph runs in (``INFERENCE_PRECISION_HINT``).
PRECISION_HINTS = {"bf16": "bf16", "fp32": "f32"}


def import_openvino():
    """The ``openvino`` module, or an ImportError that says how to install it."""
    try:
        import openvino
    except ImportError as error:
        raise ImportError("OpenVINO is not installed: pip install -c constraints.txt openvino") from error
    return openvino


def openvino_precision(hardware=None) -> str:
    """The precision OpenVINO runs a graph in on this CPU: ``"bf16"`` with bf16 matrix instructions
    (AMX, avx512_bf16), else ``"fp32"``."""
    if hardware is None:
        from ..hardware import detect_hardware

        hardware = detect_hardware()
    return hardware.openvino_precision


class OpenVinoBackend:
    """Runs an OpenVINO graph (``openvino_model.xml``, or any model OpenVINO reads, ``model.onnx``
    included) on the CPU: ``backend(input_ids, attention_mask, tasks=None)`` → ``{task: probabilities}``
    as NumPy float32 arrays of shape ``(batch, sequence, labels)``, as the ONNX Runtime backend gives them.

    A call that names ``tasks`` runs the graph cut to their outputs: OpenVINO leaves out every
    operation that only the other outputs need (a spoken-command head's own encoder layers). Each such
    graph is compiled when first asked for and kept.

    Args:
        model_file: the graph.
        precision: ``"bf16"`` or ``"fp32"`` (default: :func:`openvino_precision`).
        num_threads: OpenVINO's inference threads (default: its own choice, every core).
    """

    def __init__(self, model_file: str | os.PathLike, *, precision: str | None = None, num_threads: int | None = None):
        openvino = import_openvino()
        self.precision = precision or openvino_precision()
        if self.precision not in PRECISION_HINTS:
            raise ValueError(f"precision must be one of {', '.join(PRECISION_HINTS)}, got {self.precision!r}")
        self._config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": PRECISION_HINTS[self.precision], "PERFORMANCE_HINT": "LATENCY"}
        if num_threads:
            self._config["INFERENCE_NUM_THREADS"] = int(num_threads)
        self.model_file = model_file
        self._core = openvino.Core()
        self.model = self._core.read_model(str(model_file))
        # An output keeps the ONNX graph's name among its names (a conversion may add others).
        self._results = {
            name[: -len(LOGITS_SUFFIX)]: result
            for result in self.model.get_results()
            for name in result.output(0).get_names()
            if name.endswith(LOGITS_SUFFIX)
        }
        self.outputs = tuple(self._results)
        self._graphs: dict[tuple[str, ...], tuple[Any, dict[str, Any]]] = {}
        # One compiled graph a set of outputs, shared; one infer request a thread and graph, since a
        # request runs one inference at a time ("Infer Request is busy") and a pipeline may be shared by
        # a server's threads.
        self._compiling = threading.Lock()
        self._requests = threading.local()

    @property
    def num_labels(self) -> dict[str, int | None]:
        """Classes of each task head, as the graph declares them (None where its last axis is dynamic)."""
        declared = {}
        for task, result in self._results.items():
            shape = result.get_output_partial_shape(0)
            classes = shape[shape.rank.get_length() - 1]
            declared[task] = classes.get_length() if classes.is_static else None
        return declared

    def check_heads(self, label_sets: Mapping[str, Sequence[str]]) -> None:
        """Raise ValueError unless the graph has one ``<task>_logits`` output per task of ``label_sets``
        (task name → the labels the model's config gives it), each with that many classes."""
        check_declared_heads(str(self.model_file), self.num_labels, label_sets)

    def _graph(self, tasks: tuple[str, ...]):
        """This thread's infer request of the graph cut to ``tasks``' outputs, and its output ports by task."""
        with self._compiling:
            if tasks not in self._graphs:
                openvino = import_openvino()
                model = self.model
                if tasks != self.outputs:
                    model = openvino.Model([self._results[task] for task in tasks], self.model.get_parameters(), self.model.get_friendly_name())
                compiled = self._core.compile_model(model, "CPU", self._config)
                ports = {task: port for port in compiled.outputs for task in tasks if f"{task}{LOGITS_SUFFIX}" in port.get_names()}
                self._graphs[tasks] = (compiled, ports)
            compiled, ports = self._graphs[tasks]
        requests = self._requests.__dict__.setdefault("by_tasks", {})
        if tasks not in requests:
            requests[tasks] = compiled.create_infer_request()
        return requests[tasks], ports

    def __call__(self, input_ids, attention_mask, tasks: Collection[str] | None = None) -> dict[str, np.ndarray]:
        ids, mask = np.asarray(input_ids, dtype=np.int64), np.asarray(attention_mask, dtype=np.int64)
        chosen = chosen_outputs(self.outputs, tasks)
        if len(ids) > 1 and self.precision != "fp32":
            return run_each_sequence_alone(lambda i, m: self(i, m, chosen), ids, mask)
        request, ports = self._graph(chosen)
        results = request.infer({INPUT_NAMES[0]: ids, INPUT_NAMES[1]: mask})
        return {task: softmax(results[port]) for task, port in ports.items()}



__all__ = ["OpenVinoBackend", "import_openvino", "openvino_precision"]

"""OpenVINO IR folders (``openvino_model.xml`` and ``.bin``, the layout Optimum Intel writes) run by
OpenVINO on the CPU, in the precision the CPU computes fastest in: bf16 where it has AMX or
avx512_bf16 (OpenVINO's ``INFERENCE_PRECISION_HINT``), else fp32.

The embedded default runs this way on CPUs with AMX or avx512_bf16: its graph is converted once from its fp32 ONNX
export and kept in the cache (:func:`hf_punctcase.export.cache.build_graph`, kind ``"openvino"``). A folder of
this format loads through the same ``from_pretrained`` and ``pipeline("punct-case", model=folder)``.
In bf16 each sequence of a batch runs alone on its own tokens, so that a transcript is restored the
same whatever its batch mates (a bf16 kernel rounds a product by its shape).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..execution import OPENVINO
from ..faults import checkpoint_fault as fault
from ..runtime.onnx_backend import INPUT_NAMES, LOGITS_SUFFIX, chosen_outputs, run_each_sequence_alone, softmax
from .base import GraphModel, ModelFormat
from .onnx import LOADING_ONLY, check_runs_as_exported
from .torch import weight_files

#: The graph of an OpenVINO folder, and its weights beside it.
OPENVINO_MODEL_FILE = "openvino_model.xml"
OPENVINO_WEIGHTS_FILE = "openvino_model.bin"
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
    return "bf16" if hardware.amx or hardware.avx512_bf16 else "fp32"


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

    def check_heads(self, labels: Mapping[str, tuple[str, ...]]) -> None:
        """Raise ValueError unless the graph has one output per task the config lists."""
        missing = sorted(set(labels) - set(self.outputs))
        if missing:
            raise ValueError(f"the OpenVINO graph has no output for {', '.join(missing)}: export it again")

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


class OpenVinoFormat(ModelFormat):
    """A folder holding an OpenVINO IR graph with the checkpoint's config and tokenizer."""

    name = "openvino"
    runtime = OPENVINO
    files = f"{OPENVINO_MODEL_FILE} and {OPENVINO_WEIGHTS_FILE}"
    description = "an OpenVINO export"

    def detect(self, folder: Path) -> bool:
        return (folder / OPENVINO_MODEL_FILE).is_file() and not weight_files(folder)

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        # The graph is all that runs: no code from the folder, whatever its model type.
        if not (folder / OPENVINO_WEIGHTS_FILE).is_file():
            raise fault(folder, f"{OPENVINO_MODEL_FILE} has no {OPENVINO_WEIGHTS_FILE} beside it")
        head = (folder / OPENVINO_MODEL_FILE).read_bytes()[:512].lstrip()
        if not head.startswith(b"<?xml") and not head.startswith(b"<net"):
            raise fault(folder, f"{OPENVINO_MODEL_FILE} is not an OpenVINO IR graph (no XML network)")

    def load_model(self, folder: str, *, dtype=None, device_map=None, num_threads: int | None = None, **kwargs: Any):
        """The folder as an :class:`OpenVinoModel` on the CPU; ``dtype`` may only be float32 or "auto"
        (OpenVINO picks the CPU's precision), and there is no ``device_map``."""
        if device_map is not None:
            raise ValueError(f"model path {folder} is an OpenVINO export: it runs on the CPU, without a device_map")
        check_runs_as_exported(
            folder, dtype=dtype, kind=self.description, runtime="OpenVINO", precision="OpenVINO runs it in the CPU's precision"
        )
        unknown = sorted(name for name in kwargs if name not in LOADING_ONLY and not name.startswith("_"))
        if unknown:
            raise TypeError(f"model path {folder} is an OpenVINO export: from_pretrained got arguments it cannot use: {unknown}")
        return OpenVinoModel(folder, num_threads=num_threads)


class OpenVinoModel(GraphModel):
    """A folder's OpenVINO graph (``openvino_model.xml``) as the ``punct-case`` pipeline's model: the
    checkpoint's config and an :class:`OpenVinoBackend` (what the pipeline asks of a model,
    :class:`~hf_punctcase.formats.base.GraphModel`; it carries its own ``backend``)."""

    runtime = OPENVINO
    runtime_name = "OpenVINO"
    files = (OPENVINO_MODEL_FILE, OPENVINO_WEIGHTS_FILE)

    def __init__(self, folder: str | os.PathLike, *, precision: str | None = None, num_threads: int | None = None):
        super().__init__(folder)
        self._attach(OpenVinoBackend(self.folder / OPENVINO_MODEL_FILE, precision=precision, num_threads=num_threads))

    @property
    def precision(self) -> str:
        return self.backend.precision


__all__ = [
    "OPENVINO_MODEL_FILE", "OPENVINO_WEIGHTS_FILE", "OpenVinoBackend", "OpenVinoFormat", "OpenVinoModel",
    "import_openvino", "openvino_precision",
]

"""The ONNX Runtime backend: subword ids in, per-task probabilities out, with NumPy and ONNX Runtime
only (no torch, no transformers).

A folder exported by :func:`hf_punctcase.export.onnx.export_onnx` holds ``model.onnx``
(:data:`ONNX_MODEL_FILE`), whose inputs are ``input_ids`` and ``attention_mask`` (int64, shape
``(batch, sequence)``) and whose outputs are one ``<task>_logits`` per head (``punct_logits``,
``case_logits``: shape ``(batch, sequence, labels)``), next to the model's ``config.json``, its tokenizer
files and ``onnx_export.json`` (:data:`EXPORT_INFO_FILE`, what the export did and what the runtime needs
besides the config). The pipeline (:class:`hf_punctcase.formats.onnx.OnnxModel`) and the
torch-free runtime (:class:`hf_punctcase.runtime.OnDeviceRestorer`) both run the model through
:class:`OnnxBackend`; a graph of the library's cache runs through :class:`CachedCutsBackend`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic_files import atomic_output, atomic_write_text
from .base import INPUT_NAMES, LOGITS_SUFFIX, check_declared_heads, chosen_outputs, run_each_sequence_alone, softmax, usable_cpus

#: The ONNX graph of an exported folder: fp32, or int8 where the export quantised it (one model a folder).
ONNX_MODEL_FILE = "model.onnx"
#: What an export did (precision, opset, parity with torch) and the runtime settings it resolved.
EXPORT_INFO_FILE = "onnx_export.json"


def read_export_info(folder: str | os.PathLike) -> dict:
    """An exported folder's :data:`EXPORT_INFO_FILE` as a dict; ``{}`` where the folder has none.
    Raises ValueError when the file is not a JSON object."""
    import json

    info_file = Path(folder) / EXPORT_INFO_FILE
    if not info_file.is_file():
        return {}
    info = json.loads(info_file.read_text(encoding="utf-8"))
    if not isinstance(info, dict):
        raise ValueError(f"{info_file} is not a JSON object")
    return info


def import_onnxruntime():
    """The ``onnxruntime`` module, or an ImportError that says how to install it."""
    try:
        import onnxruntime
    except ImportError as error:
        raise ImportError(
            "ONNX Runtime is not installed: pip install -c constraints.txt onnxruntime "
            "(or the package's [runtime] extra)"
        ) from error
    return onnxruntime


class OnnxBackend:
    """Runs an exported model (a ``model.onnx`` file, or a folder holding one) with ONNX Runtime.

    Called like the torch backend: ``backend(input_ids, attention_mask, tasks=None)`` with integer
    arrays (NumPy arrays, lists or CPU tensors) of shape ``(batch, sequence)``, padding marked by 0 in
    the mask; returns ``{task: probabilities}``, NumPy float32 arrays of shape ``(batch, sequence,
    labels)``, one per ``<task>_logits`` output of the graph, or per task of ``tasks`` where given.

    ONNX Runtime runs every node of a graph whatever outputs are asked for, so a call that names
    ``tasks`` runs the graph cut to their outputs and the nodes they read (the whole graph where the
    ``onnx`` package is not installed), made when first asked for and kept: a spoken-command head's
    own encoder layers then cost nothing to calls that do not use them. The whole graph's session,
    made on loading, is let go when a call first runs a cut one, unless a call has run it.

    A graph quantised dynamically (its activations quantised at run time with one scale per tensor,
    as ``onnx_export.json`` records) runs one sequence at a time, each cut to its own length: one
    scale over a whole batch would make a sequence's outputs depend on its batch mates and padding.
    The sequences of a batch then run side by side, one thread each, on a second InferenceSession with
    one thread per operator, so that batches still use every core (a lone sequence runs on the main
    InferenceSession, whose operators use all threads). Every other graph runs the batch at once.

    Args:
        model: the ``.onnx`` file, or an exported folder (its :data:`ONNX_MODEL_FILE`).
        providers: ONNX Runtime execution providers, in order of preference (default: the CPU).
        intra_op_num_threads: threads for one operator (default: ONNX Runtime's, one per physical core).
        one_sequence_at_a_time: run each sequence alone (default: where the export record says the
            graph quantises activations dynamically).
        sequence_workers: sequences run side by side when each runs alone (default: the CPUs this
            process may use, or ``intra_op_num_threads`` where given; 1 runs them one after another).
    """

    def __init__(
        self,
        model: str | os.PathLike,
        *,
        providers: Sequence[str] | None = None,
        intra_op_num_threads: int | None = None,
        one_sequence_at_a_time: bool | None = None,
        sequence_workers: int | None = None,
    ):
        ort = import_onnxruntime()
        path = Path(model)
        if path.is_dir():
            path = path / ONNX_MODEL_FILE
        if not path.is_file():
            raise FileNotFoundError(f"ONNX model {path} does not exist")
        options = ort.SessionOptions()
        if intra_op_num_threads is not None:
            options.intra_op_num_threads = intra_op_num_threads
        self.path = path
        self.providers = list(providers or ["CPUExecutionProvider"])
        self._options = options
        # The graph's inputs and outputs, read off the whole graph's session (a subclass may know them
        # without one: :meth:`_kept_description`); that session stays for the calls that run it.
        session, description = None, self._kept_description()
        if description is None:
            session = ort.InferenceSession(str(path), options, providers=self.providers)
            description = {
                "inputs": [node.name for node in session.get_inputs()],
                "outputs": {node.name: node.shape for node in session.get_outputs()},
            }
            self._keep_description(description)
        missing = [name for name in INPUT_NAMES if name not in description["inputs"]]
        if missing:
            raise ValueError(f"ONNX model {path} lacks the inputs {missing} (it has {sorted(description['inputs'])})")
        self.outputs: dict[str, str] = {
            name[: -len(LOGITS_SUFFIX)]: name for name in description["outputs"] if name.endswith(LOGITS_SUFFIX) and name != "logits"
        }
        self._shapes = dict(description["outputs"])
        if not self.outputs:
            raise ValueError(f"ONNX model {path} has no <task>_logits output")
        if one_sequence_at_a_time is None:
            one_sequence_at_a_time = quantizes_dynamically(path.parent)
        self.one_sequence_at_a_time = one_sequence_at_a_time
        if sequence_workers is not None and (
            isinstance(sequence_workers, bool) or not isinstance(sequence_workers, int) or sequence_workers < 1
        ):
            raise ValueError(f"sequence_workers must be a positive integer, not {sequence_workers!r}")
        self.sequence_workers = sequence_workers or intra_op_num_threads or usable_cpus()
        # Main sessions by the tasks they run. The whole graph's, made here where its description was not
        # kept, is dropped when a call first runs a cut one, unless a call has run it: a process holds the
        # sessions its calls use.
        self._sessions: dict[tuple[str, ...], object] = {} if session is None else {tuple(self.outputs): session}
        self._whole_graph_used = False
        self._single_thread_sessions: dict[tuple[str, ...], object] = {}
        self._pool = None
        self._pool_pid: int | None = None

    @property
    def num_labels(self) -> dict[str, int | None]:
        """Classes of each task head, as the graph declares them (None where its last axis is symbolic)."""
        shapes = self._shapes
        return {task: (shapes[name][-1] if isinstance(shapes[name][-1], int) else None) for task, name in self.outputs.items()}

    def check_heads(self, label_sets: Mapping[str, Sequence[str]]) -> None:
        """Raise ValueError unless the graph has one ``<task>_logits`` output per task of ``label_sets``
        (task name → the labels the model's config gives it), each with that many classes."""
        check_declared_heads(str(self.path), self.num_labels, label_sets)

    def __call__(self, input_ids, attention_mask, tasks: Collection[str] | None = None) -> dict[str, np.ndarray]:
        input_ids = np.asarray(input_ids, dtype=np.int64)
        attention_mask = np.asarray(attention_mask, dtype=np.int64)
        chosen = chosen_outputs(tuple(self.outputs), tasks)
        names = [self.outputs[task] for task in chosen]
        if not self.one_sequence_at_a_time:
            logits = self._session(chosen).run(names, {"input_ids": input_ids, "attention_mask": attention_mask})
            return {task: softmax(values) for task, values in zip(chosen, logits)}
        session, map_rows = self._session(chosen), map
        if len(input_ids) > 1 and self.sequence_workers > 1:
            session, map_rows = self._side_by_side_session(chosen), self._pool.map

        def run_one(ids, mask) -> dict[str, np.ndarray]:
            logits = session.run(names, {"input_ids": ids, "attention_mask": mask})
            return {task: softmax(values) for task, values in zip(chosen, logits)}

        return run_each_sequence_alone(run_one, input_ids, attention_mask, map_rows)

    def _session(self, tasks: tuple[str, ...]):
        """The main InferenceSession of the graph cut to ``tasks``' outputs (the whole graph for all of
        them), kept by task set."""
        whole = tuple(self.outputs)
        if tasks == whole:
            self._whole_graph_used = True
        elif not self._whole_graph_used:
            self._sessions.pop(whole, None)
        if tasks not in self._sessions:
            self._sessions[tasks] = self._new_session(tasks, self._options)
        return self._sessions[tasks]

    def _new_session(self, tasks: tuple[str, ...], options):
        """A new InferenceSession of the graph cut to ``tasks``' outputs (one a process before kept, where
        a subclass keeps them: :meth:`_kept_session`, :meth:`_keep_cut`)."""
        ort = import_onnxruntime()
        session = self._kept_session(tasks, options)
        if session is not None:
            return session
        cut = self._graph_cut_to(tasks)
        if cut is None:
            return ort.InferenceSession(str(self.path), options, providers=self.providers)
        session = self._keep_cut(tasks, cut, options)
        if session is not None:
            return session
        import tempfile

        import onnx

        # Made from a file: a session made from bytes keeps them as long as it lives.
        with tempfile.TemporaryDirectory(prefix="hf_punctcase-") as folder:
            onnx.save(cut, Path(folder) / ONNX_MODEL_FILE)
            return ort.InferenceSession(str(Path(folder) / ONNX_MODEL_FILE), options, providers=self.providers)

    def _kept_description(self) -> dict | None:
        """The graph's input names and output shapes (``{"inputs": [...], "outputs": {name: shape}}``) as an
        earlier process kept them, or None: none is kept here; the graph cache's backend keeps them."""
        return None

    def _keep_description(self, description: dict) -> None:
        """Keep the graph's input names and output shapes for later processes: nothing is kept here."""

    def _kept_session(self, tasks: tuple[str, ...], options):
        """A session of the graph cut to ``tasks`` that an earlier process kept, or None: none is kept
        here (a user's export folder is theirs); the graph cache's backend keeps them."""
        return None

    def _keep_cut(self, tasks: tuple[str, ...], cut, options):
        """Keep the graph cut to ``tasks`` for later processes and return a session of it, or None (as
        here): the session is then made from a temporary copy."""
        return None

    def _graph_cut_to(self, tasks: tuple[str, ...]):
        """The graph (an ``onnx.ModelProto``) with only ``tasks``' outputs and the nodes they read; None
        for all of them, for a graph with subgraphs, or where ``onnx`` is not installed."""
        if tasks == tuple(self.outputs):
            return None
        try:
            import onnx
        except ImportError:
            return None
        # Cut in place: onnx.utils.Extractor infers shapes and copies the graph on the way, several
        # copies of a 90 MB int8 graph at once, and ONNX Runtime runs every node whatever is read.
        model = onnx.load(str(self.path))
        graph = model.graph
        if any(attribute.g.node or attribute.graphs for node in graph.node for attribute in node.attribute):
            return None  # a node with subgraphs reads names its inputs do not list
        kept = [output for output in graph.output if output.name in {self.outputs[task] for task in tasks}]
        del graph.output[:]
        graph.output.extend(kept)
        needed = {output.name for output in kept}
        nodes = []
        for node in reversed(graph.node):  # nodes are stored in topological order
            if needed.intersection(node.output):
                nodes.append(node)
                needed.update(name for name in node.input if name)
        del graph.node[:]
        graph.node.extend(reversed(nodes))
        initializers = [tensor for tensor in graph.initializer if tensor.name in needed]
        del graph.initializer[:]
        graph.initializer.extend(initializers)
        value_info = [info for info in graph.value_info if info.name in needed]
        del graph.value_info[:]
        graph.value_info.extend(value_info)
        return model

    def _side_by_side_session(self, tasks: tuple[str, ...]):
        """The InferenceSession that sequences share when they run side by side (one thread per operator: the
        threads of the pool are the parallelism), and its pool; both made on first use, and again in a
        forked child (a pool's threads do not survive a fork)."""
        if self._pool_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            self._single_thread_sessions = {}
            self._pool = ThreadPoolExecutor(self.sequence_workers, thread_name_prefix="hf_punctcase-onnx")
            self._pool_pid = os.getpid()
        if tasks not in self._single_thread_sessions:
            ort = import_onnxruntime()
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            self._single_thread_sessions[tasks] = self._new_session(tasks, options)
        return self._single_thread_sessions[tasks]


def quantizes_dynamically(folder: str | os.PathLike) -> bool:
    """Whether an exported folder's record says its graph quantises activations at run time (False
    where the record is missing or unreadable)."""
    try:
        quantization = read_export_info(folder).get("quantization")
    except (OSError, ValueError):
        return False
    return isinstance(quantization, dict) and "dynamic" in str(quantization.get("method", ""))


class CachedCutsBackend(OnnxBackend):
    """An :class:`OnnxBackend` over a graph of the library's cache that keeps, in ``cut_dir``, each graph
    cut to a call's tasks, for later processes to load instead of cutting it again: about a second of a
    process's first call for the default's int8 graph (``onnx`` imported, the graph read and cut). It
    keeps the graph's input and output names too, so that a later process makes no session of the whole
    graph until a call runs it (the graph was checked against its checkpoint when it was built). Each
    file is named by the graph file's size and time, so that a graph built again is read and cut again;
    one that does not load (damaged) is made again and replaced; a folder that cannot take them leaves
    each process to make its own."""

    def __init__(self, model: str | os.PathLike, cut_dir: str | os.PathLike, **options: Any):
        self.cut_dir = Path(cut_dir)
        super().__init__(model, **options)

    def _kept_file(self, kind: str, suffix: str = ".onnx") -> Path:
        stat = self.path.stat()
        return self.cut_dir / f"{self.path.stem}.{kind}-{stat.st_size}-{stat.st_mtime_ns}{suffix}"

    def _cut_file(self, tasks: tuple[str, ...]) -> Path:
        return self._kept_file(f"cut-{'-'.join(tasks)}")

    def _kept_description(self) -> dict | None:
        try:
            description = json.loads(self._kept_file("outputs", ".json").read_text(encoding="utf-8"))
            return description if set(description) == {"inputs", "outputs"} else None
        except (OSError, ValueError, AttributeError):
            return None

    def _keep_description(self, description: dict) -> None:
        with contextlib.suppress(OSError):
            atomic_write_text(self._kept_file("outputs", ".json"), json.dumps(description))

    def _kept_session(self, tasks: tuple[str, ...], options):
        kept = self._cut_file(tasks)
        if not kept.is_file():
            return None
        try:
            return import_onnxruntime().InferenceSession(str(kept), options, providers=self.providers)
        except Exception:  # noqa: BLE001 - ONNX Runtime's errors derive from Exception alone
            kept.unlink(missing_ok=True)  # damaged on disk: cut again
            return None

    def _keep_cut(self, tasks: tuple[str, ...], cut, options):
        kept = self._cut_file(tasks)
        try:
            with atomic_output(kept, binary=True) as handle:
                handle.write(cut.SerializeToString())
        except OSError:
            return None
        return import_onnxruntime().InferenceSession(str(kept), options, providers=self.providers)


__all__ = [
    "EXPORT_INFO_FILE", "ONNX_MODEL_FILE", "CachedCutsBackend", "OnnxBackend", "import_onnxruntime", "quantizes_dynamically",
    "read_export_info",
]

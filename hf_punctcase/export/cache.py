"""The graphs a torch checkpoint runs as on a CPU, built once per machine and kept in a cache: its int8
ONNX Runtime graph (CPUs without bf16 matrix units) and its OpenVINO graph (CPUs with AMX or avx512_bf16).

    from hf_punctcase.export.cache import build_int8_graph, cached_int8_graph
    cached_int8_graph(folder)                    # the built graph's folder, or None: a lookup
    build_int8_graph(folder, model, tokenizer)   # from the checkpoint already loaded: ~20 s the first time

The folder is an ordinary export (:func:`hf_punctcase.export.onnx_graph.write_export`) whose encoder's
matrix products are then rewritten as int8 products with one activation scale per token and one weight
scale per output channel (:func:`hf_punctcase.export.per_token.quantize_per_token`). The feed-forward
output projections (whose inputs, after the GELU, have the widest range) and the heads stay fp32: with
them in int8 too, MTS-Dialog dev punctuation F1 fell 0.4 below fp32 (docs/benchmarks.md). For the
int8-stored default the weights land on the grid they are stored on. Per-token scales read nothing
but the token's own values, so a transcript's output does not depend on its batch mates.

Its name carries a hash of the checkpoint's files and of the versions that built it, so a changed
checkpoint or library builds a new one (and the graphs of the same checkpoint built by other versions
are removed once it is in place). Two processes building it at once both finish; the first folder
renamed into place is kept. Each file's size and SHA-256 are recorded beside it (:data:`CACHE_RECORD`)
and checked before the graph is used, once per process: a truncated or damaged graph is removed and
built again, never run. A cache folder that cannot be written (read-only, full) leaves the model to
run without the graph, said in one warning line.

Cache folder: ``$HF_PUNCTCASE_CACHE``, else ``$HF_HOME/hf_punctcase`` (``~/.cache/huggingface/hf_punctcase``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

from ..backends.onnxruntime import ONNX_MODEL_FILE

logger = logging.getLogger(__name__)

#: Bumped when the way the cached graph is built changes.
_BUILD_VERSION = "3"
#: The file in a built graph's folder that records its files' sizes and SHA-256 digests.
CACHE_RECORD = "cache_record.json"
#: Room a build needs besides the graph's own size, which is taken as the checkpoint's weights' size.
_SPARE_BYTES = 64 << 20


def keeps_float(node_name: str) -> bool:
    """MatMuls the cached graph keeps in fp32: everything outside the encoder's layers and a command
    head's own layers (the heads), and each layer's feed-forward output projection."""
    in_layers = "/encoder/" in node_name or "/command_branch" in node_name
    return not in_layers or "/output/dense/" in node_name


def cache_dir() -> Path:
    """Where built graphs are kept: ``$HF_PUNCTCASE_CACHE``, else ``$HF_HOME/hf_punctcase``."""
    if os.environ.get("HF_PUNCTCASE_CACHE"):
        return Path(os.environ["HF_PUNCTCASE_CACHE"]).expanduser()
    from huggingface_hub import constants

    return Path(constants.HF_HOME).expanduser() / "hf_punctcase"


#: Fingerprints computed in this process, by the files' names, sizes and modification times: a load
#: after the first does not read the weights again.
_FINGERPRINTS: dict[tuple, str] = {}


def _fingerprint(folder: Path) -> str:
    files = [file for file in sorted(folder.iterdir()) if file.is_file() and file.suffix in (".json", ".safetensors", ".txt", ".model")]
    key = (str(folder.resolve()), *((file.name, *_size_and_time(file)) for file in files))
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = _hash_files(files)
    return _FINGERPRINTS[key]


def _size_and_time(file: Path) -> tuple[int, int]:
    status = file.stat()
    return status.st_size, status.st_mtime_ns


def _hash_files(files: list[Path]) -> str:
    import onnxruntime
    import torch

    from ..version import __version__

    digest = hashlib.sha256()
    for part in (_BUILD_VERSION, __version__, torch.__version__, onnxruntime.__version__):
        digest.update(part.encode() + b"\0")
    for file in files:
        digest.update(file.name.encode() + b"\0")
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


#: The graphs kept: kind → (the file that makes a built folder, what it is called in messages).
GRAPHS = {
    "int8": (ONNX_MODEL_FILE, "int8 ONNX Runtime graph"),
    "openvino": ("openvino_model.xml", "OpenVINO graph"),
}


def graph_folder(folder: str | os.PathLike, kind: str = "int8") -> Path:
    """Where the graph of ``kind`` (:data:`GRAPHS`) of the checkpoint in ``folder`` is kept (whether
    or not it is built yet)."""
    from ..embedded import DEFAULT_MODEL_DIR

    folder = Path(folder).resolve()
    name = "default" if folder == DEFAULT_MODEL_DIR.resolve() else folder.name
    # The folder's path tells apart checkpoints of one name (runs/a/final, runs/b/final) and installs.
    where = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
    return cache_dir() / "onnx" / f"{name}-{where}-{kind}-{_fingerprint(folder)}"


def cached_graph(folder: str | os.PathLike, kind: str = "int8") -> Path | None:
    """The graph of ``kind`` of the checkpoint in ``folder`` if it is built and intact, else None (a
    lookup: builds nothing; a damaged graph is removed, with one warning line, so that it is built again)."""
    target = graph_folder(folder, kind)
    model_file, what = GRAPHS[kind]
    if not (target / model_file).is_file():
        return None
    fault = _damage(target)
    if fault is None:
        return target
    logger.warning("the cached %s in %s is damaged (%s): it is removed and built again", what, target, fault)
    _remove(target)
    return None


def int8_graph_folder(folder: str | os.PathLike) -> Path:
    """Where the int8 graph of the checkpoint in ``folder`` is kept (:func:`graph_folder`)."""
    return graph_folder(folder, "int8")


def cached_int8_graph(folder: str | os.PathLike) -> Path | None:
    """The checkpoint's int8 graph, if built and intact (:func:`cached_graph`)."""
    return cached_graph(folder, "int8")


#: Graph folders found intact in this process, by their files' names, sizes and modification times.
_INTACT: set[tuple] = set()


def _damage(target: Path) -> str | None:
    """What is wrong with a built graph's folder, or None where every file is as recorded."""
    try:
        record = json.loads((target / CACHE_RECORD).read_text(encoding="utf-8"))["files"]
        stamps = (str(target), *((name, *_size_and_time(target / name)) for name in sorted(record)))
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"no readable {CACHE_RECORD}: {type(error).__name__}"
    if stamps in _INTACT:
        return None
    for name, expected in record.items():
        if (target / name).stat().st_size != expected["size"]:
            return f"{name} has {(target / name).stat().st_size} bytes, not the {expected['size']} written"
        if _sha256(target / name) != expected["sha256"]:
            return f"{name} is not the file written (its SHA-256 differs)"
    _INTACT.add(stamps)
    return None


def _sha256(file: Path) -> str:
    with open(file, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _record_files(folder: Path) -> None:
    files = {
        file.name: {"size": file.stat().st_size, "sha256": _sha256(file)}
        for file in sorted(folder.iterdir())
        if file.is_file()
    }
    (folder / CACHE_RECORD).write_text(json.dumps({"files": files}, indent=1) + "\n", encoding="utf-8")


def _remove(target: Path) -> None:
    """Remove a graph's folder, renamed aside first so that no process finds it half removed."""
    aside = target.with_name(f".{target.name}.{os.getpid()}.removed")
    try:
        target.rename(aside)
    except OSError:
        return  # another process removed or replaced it, or the cache cannot be written: nothing to do
    shutil.rmtree(aside, ignore_errors=True)


def _remove_other_versions(target: Path) -> None:
    """Remove the graphs of the same checkpoint built by other versions (or of its older files)."""
    prefix = target.name.rsplit("-", 1)[0] + "-"
    for other in target.parent.glob(prefix + "*"):
        if other != target and other.is_dir() and other.name.removeprefix(prefix).isalnum():
            _remove(other)


def _check_room(model, target: Path) -> None:
    """Raise OSError where the cache cannot take the graph: a folder that cannot be written, or less
    free space than two fp32 copies of the model's weights (the traced graph and the one built from
    it) and a margin: a build that fills the disk midway costs minutes for nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise PermissionError(f"{target.parent} cannot be written")
    needed = 2 * 4 * sum(parameter.numel() for parameter in model.parameters()) + _SPARE_BYTES
    free = shutil.disk_usage(target.parent).free
    if free < needed:
        raise OSError(f"{target.parent} has {free >> 20} MB free, and the graph needs about {needed >> 20} MB")


def build_graph(folder: str | os.PathLike, model, tokenizer, kind: str = "int8") -> Path:
    """The graph of ``kind`` of the checkpoint in ``folder``: the cached one, or one built now from
    ``model`` and ``tokenizer`` (that checkpoint, already loaded; the model is cast to fp32 in place)
    and kept. ``"int8"``: the encoder's products in int8 with per-token scales (run by ONNX Runtime);
    ``"openvino"``: the fp32 graph converted to OpenVINO's IR (run by OpenVINO in the CPU's precision).
    Raises ImportError when the converter is missing and OSError when the cache cannot take it (a
    folder that cannot be written, too little free space), before anything is built."""
    from ..atomic_files import atomic_directory

    folder = Path(folder)
    found = cached_graph(folder, kind)
    if found is not None:
        return found
    target = graph_folder(folder, kind)
    _, what = GRAPHS[kind]
    # Fail before tracing when the converter's dependency is missing.
    if kind == "openvino":
        from ..backends.openvino import import_openvino

        import_openvino()
    else:
        import onnx  # noqa: F401
    _check_room(model, target)
    logger.warning("building the %s of %s once, in %s", what, folder.name, target)
    try:
        with atomic_directory(target) as staging:
            _write_graph(model, tokenizer, staging, kind, source=target.name)
            _record_files(staging)
    except (FileExistsError, OSError):
        found = cached_graph(folder, kind)
        if found is not None:  # another process put its copy in place first
            return found
        raise
    _remove_other_versions(target)
    return target


def build_int8_graph(folder: str | os.PathLike, model, tokenizer) -> Path:
    """The checkpoint's int8 graph, cached or built now (:func:`build_graph`)."""
    return build_graph(folder, model, tokenizer, "int8")


def _write_graph(model, tokenizer, staging: Path, kind: str, source: str) -> None:
    from .onnx_graph import write_export

    if kind == "int8":
        write_export(model, tokenizer, staging, source=source, int8="per_token", keep_float=keeps_float)
        return
    from ..backends.openvino import import_openvino
    from ..formats.openvino import OPENVINO_MODEL_FILE

    openvino = import_openvino()
    write_export(model, tokenizer, staging, source=source)
    # The weights stay fp32 in the IR: the CPU's precision (bf16 with AMX or avx512_bf16) is chosen when it is compiled.
    openvino.save_model(openvino.Core().read_model(str(staging / ONNX_MODEL_FILE)), str(staging / OPENVINO_MODEL_FILE), compress_to_fp16=False)
    (staging / ONNX_MODEL_FILE).unlink()


__all__ = [
    "CACHE_RECORD", "GRAPHS", "build_graph", "build_int8_graph", "cache_dir", "cached_graph", "cached_int8_graph",
    "graph_folder", "int8_graph_folder", "keeps_float",
]

"""The int8 ONNX Runtime graph of a torch checkpoint, built once per machine and kept in a cache.

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
checkpoint or library builds a new one. Two processes building it at once both finish; the first
folder renamed into place is kept.

Cache folder: ``$HF_PUNCTCASE_CACHE``, else ``$HF_HOME/hf_punctcase`` (``~/.cache/huggingface/hf_punctcase``).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from ..runtime.onnx_backend import ONNX_MODEL_FILE

logger = logging.getLogger(__name__)

#: Bumped when the way the cached graph is built changes.
_BUILD_VERSION = "2"


def keeps_float(node_name: str) -> bool:
    """MatMuls the cached graph keeps in fp32: everything outside the encoder's layers (the heads) and
    each layer's feed-forward output projection."""
    return "/encoder/" not in node_name or "/output/dense/" in node_name


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


def int8_graph_folder(folder: str | os.PathLike) -> Path:
    """Where the int8 graph of the checkpoint in ``folder`` is kept (whether or not it is built yet)."""
    from ..embedded import DEFAULT_MODEL_DIR

    folder = Path(folder)
    name = "default" if folder.resolve() == DEFAULT_MODEL_DIR.resolve() else folder.name
    return cache_dir() / "onnx" / f"{name}-int8-{_fingerprint(folder)}"


def cached_int8_graph(folder: str | os.PathLike) -> Path | None:
    """The int8 graph of the checkpoint in ``folder`` if it is built, else None (a lookup: builds nothing)."""
    target = int8_graph_folder(folder)
    return target if (target / ONNX_MODEL_FILE).is_file() else None


def build_int8_graph(folder: str | os.PathLike, model, tokenizer) -> Path:
    """The int8 graph of the checkpoint in ``folder``: the cached one, or one built now from ``model``
    and ``tokenizer`` (that checkpoint, already loaded; the model is cast to fp32 in place) and kept.
    Raises ImportError when ``onnx`` is missing and OSError when the cache cannot be written."""
    from ..atomic_files import atomic_directory
    from .onnx_graph import write_export

    target = int8_graph_folder(folder)
    if (target / ONNX_MODEL_FILE).is_file():
        return target
    import onnx  # noqa: F401  (fail before tracing when the quantiser's dependency is missing)

    logger.warning("building the int8 ONNX Runtime graph of %s once, in %s", Path(folder).name, target)
    try:
        with atomic_directory(target) as staging:
            write_export(model, tokenizer, staging, source=target.name, int8="per_token", keep_float=keeps_float)
    except (FileExistsError, OSError):
        if (target / ONNX_MODEL_FILE).is_file():  # another process put its copy in place first
            return target
        raise
    return target


__all__ = ["build_int8_graph", "cache_dir", "cached_int8_graph", "int8_graph_folder", "keeps_float"]

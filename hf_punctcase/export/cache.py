"""The int8 ONNX Runtime graph of a torch checkpoint, built once per machine and kept in a cache.

    from hf_punctcase.export.cache import int8_graph
    folder = int8_graph("default")   # first call: ~20 s to trace and quantise; later calls: a lookup

The folder is an ordinary export (:func:`hf_punctcase.export.onnx.export_onnx`): per-channel symmetric
8-bit weights on the matrix products only (the embedding tables stay fp32), ``uint8`` weights so that
ONNX Runtime's kernels add exact integer products on every x86 CPU. For the int8-stored default the
weights land on the grid they are stored on, so the graph differs from the shipped model only in the
run-time quantisation of activations. Its name carries a hash of the checkpoint's files and of the
versions that built it, so a changed checkpoint or library builds a new one. Two processes building
it at once both finish; the first folder renamed into place is kept.

Cache folder: ``$HF_PUNCTCASE_CACHE``, else ``$HF_HOME/hf_punctcase`` (``~/.cache/huggingface/hf_punctcase``).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from ..runtime.onnx_backend import ONNX_MODEL_FILE

logger = logging.getLogger(__name__)

#: Operators the cached graph quantises: the matrix products that carry weights. The embedding tables
#: stay fp32: ONNX Runtime quantises a Gather per tensor, coarser than the checkpoint's per-row grid.
CACHED_OP_TYPES = ("MatMul",)
#: Bumped when the way the cached graph is built changes.
_BUILD_VERSION = "1"


def cache_dir() -> Path:
    """Where built graphs are kept: ``$HF_PUNCTCASE_CACHE``, else ``$HF_HOME/hf_punctcase``."""
    if os.environ.get("HF_PUNCTCASE_CACHE"):
        return Path(os.environ["HF_PUNCTCASE_CACHE"]).expanduser()
    from huggingface_hub import constants

    return Path(constants.HF_HOME).expanduser() / "hf_punctcase"


def _fingerprint(folder: Path) -> str:
    import onnxruntime
    import torch

    from .. import __version__

    digest = hashlib.sha256()
    for part in (_BUILD_VERSION, __version__, torch.__version__, onnxruntime.__version__):
        digest.update(part.encode() + b"\0")
    for file in sorted(folder.iterdir()):
        if file.is_file() and file.suffix in (".json", ".safetensors", ".txt", ".model"):
            digest.update(file.name.encode() + b"\0")
            with open(file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def int8_graph(checkpoint: str | os.PathLike = "default") -> Path:
    """The cached int8 ONNX export of ``checkpoint`` (``"default"`` or a checkpoint folder), built on the
    first call. Raises ImportError when ``onnx`` is missing and OSError when the cache cannot be written."""
    from ..embedded import DEFAULT_MODEL_DIR
    from ..registry import resolve_model
    from .onnx import export_onnx

    folder = Path(resolve_model(str(checkpoint)))
    name = "default" if folder.resolve() == DEFAULT_MODEL_DIR.resolve() else folder.name
    target = cache_dir() / "onnx" / f"{name}-int8-{_fingerprint(folder)}"
    if (target / ONNX_MODEL_FILE).is_file():
        return target
    import onnx  # noqa: F401  (fail before tracing when the quantiser's dependency is missing)

    logger.warning("building the int8 ONNX Runtime graph of %s once, in %s", name, target)
    try:
        export_onnx(folder, target, int8=True, per_channel=True, weight_type="uint8", op_types=CACHED_OP_TYPES)
    except (FileExistsError, OSError):
        if (target / ONNX_MODEL_FILE).is_file():  # another process put its copy in place first
            return target
        raise
    return target


__all__ = ["CACHED_OP_TYPES", "cache_dir", "int8_graph"]

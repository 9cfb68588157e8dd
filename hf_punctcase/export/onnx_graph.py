"""ONNX graphs of a loaded model, whichever family: trace (:func:`write_onnx`), quantise
(:func:`quantize_int8`; per-token int8 in :mod:`~hf_punctcase.export.per_token`) and write an export
folder's files (:func:`write_export`). Loads nothing and measures nothing: exporting a checkpoint with
its agreement check is :func:`hf_punctcase.export.onnx.export_onnx`, and the int8 cache
(:mod:`hf_punctcase.export.cache`) writes the graph of the model the pipeline loaded.

The graph is traced with torch's TorchScript-based exporter (``torch.onnx.export(dynamo=False)``),
which handles both families' graphs (attention with padding masks, LSTMs) with dynamic batch and
sequence axes.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from ..backends.base import INPUT_NAMES, LOGITS_SUFFIX
from ..backends.onnxruntime import EXPORT_INFO_FILE, ONNX_MODEL_FILE

#: The ONNX opset the graphs are written in (LayerNormalization is an operator from opset 17 on).
DEFAULT_OPSET = 17
#: The operators int8 export quantises: those that carry weights (matrix products, attention, LSTMs,
#: convolutions, embedding tables). ONNX Runtime's default list adds Transpose, which carries none.
INT8_OP_TYPES = ("MatMul", "Attention", "LSTM", "Conv", "Gather", "EmbedLayerNormalization")

def _logits_module(model, tasks: Sequence[str]):
    """The model as a module returning one logits tensor per task, in ``tasks`` order (what ONNX outputs)."""
    import torch

    from ..backends.torch import task_logits

    class TaskLogits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            logits = task_logits(self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True))
            return tuple(logits[task] for task in tasks)

    return TaskLogits().eval()


def _trace_inputs(model):
    """A batch of two sequences, the second padded, for tracing: the graph is recorded with a padding
    mask so that masking is part of it."""
    import torch

    vocab = model.get_input_embeddings().num_embeddings
    input_ids = (torch.arange(2 * 8, dtype=torch.long).reshape(2, 8) * 7 + 5) % vocab
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 5:] = 0
    return input_ids, attention_mask


def write_onnx(model, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> list[str]:
    """Trace a torch model of any family into an fp32 ONNX graph at ``path``: inputs ``input_ids`` and
    ``attention_mask``, outputs one ``<task>_logits`` per head, batch and sequence axes dynamic. The
    model is put in eval mode and cast to fp32 in place. Returns the output names."""
    import torch

    from ..backends.torch import task_logits

    model = model.float().eval()
    input_ids, attention_mask = _trace_inputs(model)
    with torch.no_grad():
        tasks = list(task_logits(model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)))
    outputs = [task + LOGITS_SUFFIX for task in tasks]
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, *outputs)}
    with warnings.catch_warnings():
        # The TorchScript exporter announces its own deprecation, and tracing notes Python values it
        # keeps constant (shape checks that hold for every input).
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _logits_module(model, tasks),
            (input_ids, attention_mask),
            str(path),
            input_names=list(INPUT_NAMES),
            output_names=outputs,
            dynamic_axes=axes,
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,
        )
    return outputs


class _QuietPreprocessingAdvice(logging.Filter):
    """Drops ONNX Runtime's advice to pre-process a graph before quantising it: its pre-processing
    (symbolic shape inference) does not complete on the joint transformer's graph, and dynamic
    quantisation does not need it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


#: Weight types of int8 export. ``uint8``: symmetric around 128 (the same grid as signed int8), run by
#: ONNX Runtime's u8×u8 kernels, exact on every x86 CPU. ``int8``: u8×s8 kernels, faster on CPUs with
#: VNNI, but x86 CPUs without VNNI add their products in saturating 16-bit pairs, which wrecks a
#: transformer's outputs (the default's TED dev F1 fell to 0 on an AVX2 CPU, docs/benchmarks.md).
WEIGHT_TYPES = ("uint8", "int8")


def quantize_int8(
    source: str | os.PathLike, target: str | os.PathLike, per_channel: bool = False, weight_type: str = "uint8"
) -> None:
    """Dynamic int8 quantisation of an fp32 graph with ONNX Runtime: the weights of
    :data:`INT8_OP_TYPES` stored in 8 bits (``weight_type``, :data:`WEIGHT_TYPES`), symmetric, one scale
    per tensor (or per output channel with ``per_channel``), activations quantised at run time."""
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"weight_type {weight_type!r} is not one of {', '.join(WEIGHT_TYPES)}")
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise ImportError(
            "int8 export needs onnxruntime and onnx: pip install -c constraints.txt onnxruntime onnx (the [onnx] extra)"
        ) from error
    quiet = _QuietPreprocessingAdvice()
    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        quantize_dynamic(
            str(source), str(target), op_types_to_quantize=list(INT8_OP_TYPES), per_channel=per_channel,
            weight_type=QuantType.QUInt8 if weight_type == "uint8" else QuantType.QInt8,
            extra_options={"WeightSymmetric": True},
        )
    finally:
        root.removeFilter(quiet)


def check_export_options(int8: bool | str, per_channel: bool, weight_type: str) -> None:
    """Raise unless the options of :func:`write_export` go together."""
    if int8 not in (False, True, "per_token"):
        raise ValueError(f"int8 is True, False or 'per_token', not {int8!r}")
    if per_channel and not int8:
        raise ValueError("per_channel applies to int8 export only")
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"weight_type {weight_type!r} is not one of {', '.join(WEIGHT_TYPES)}")


def write_export(
    model,
    tokenizer,
    staging: Path,
    *,
    source: str,
    int8: bool | str = False,
    per_channel: bool = False,
    weight_type: str = "uint8",
    keep_float: Callable[[str], bool] | None = None,
    opset: int = DEFAULT_OPSET,
) -> dict:
    """Write the export of a loaded torch ``model`` and its ``tokenizer`` into the folder ``staging``
    (``model.onnx``, config, tokenizer, ``onnx_export.json``; the options as :func:`export_onnx` takes
    them) and return its record. Loads nothing and measures nothing: the int8 cache
    (:mod:`hf_punctcase.export.cache`) builds its graph with it from the model the pipeline loaded.
    The model is cast to fp32 in place (:func:`write_onnx`)."""
    import torch

    from ..backends.onnxruntime import import_onnxruntime

    check_export_options(int8, per_channel, weight_type)
    traced = staging / (ONNX_MODEL_FILE + ".fp32") if int8 else staging / ONNX_MODEL_FILE
    outputs = write_onnx(model, traced, opset)
    if int8:
        if int8 == "per_token":
            from .per_token import quantize_per_token

            quantize_per_token(traced, staging / ONNX_MODEL_FILE, keep_float or (lambda name: False))
        else:
            quantize_int8(traced, staging / ONNX_MODEL_FILE, per_channel, weight_type)
        traced.unlink()
    config = copy.deepcopy(model.config)
    # The code files auto_map and custom_pipelines name stay with the checkpoint; the graph's weights
    # are plain fp32 or ONNX Runtime's int8, never the torch checkpoint's storage quantization; and an
    # export is already what a checkpoint's preferred CPU runtime would build.
    for name in ("auto_map", "custom_pipelines", "quantization_config", "preferred_cpu_runtime"):
        if getattr(config, name, None) is not None:
            delattr(config, name)
    config.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    info = {
        "format": "onnx",
        "file": ONNX_MODEL_FILE,
        "precision": "int8" if int8 else "fp32",
        "quantization": (
            {"method": "per-token int8", "weight_type": "uint8", "per_channel": True, "op_types": ["MatMul"]}
            if int8 == "per_token" else {
                "method": "onnxruntime dynamic", "weight_type": weight_type, "per_channel": per_channel,
                "op_types": list(INT8_OP_TYPES),
            }
        ) if int8 else None,
        "opset": opset,
        "inputs": list(INPUT_NAMES),
        "outputs": outputs,
        "model_type": model.config.model_type,
        "source": source,
        "max_position_embeddings": int(model.config.max_position_embeddings),
        "size_bytes": (staging / ONNX_MODEL_FILE).stat().st_size,
        "torch_version": torch.__version__,
        "onnxruntime_version": import_onnxruntime().__version__,
    }
    (staging / EXPORT_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


__all__ = ["DEFAULT_OPSET", "INT8_OP_TYPES", "WEIGHT_TYPES", "check_export_options", "quantize_int8", "write_export", "write_onnx"]

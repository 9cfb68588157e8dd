"""The one rule that picks how a punct-case model runs: a pure function of what the model is, what
the machine has, and what the caller asked for.

    plan(artifacts, hardware, device=None, dtype=None) -> ExecutionPlan

In order:

1. A dtype the caller names is used as it is, with torch.
2. An ONNX export folder runs with ONNX Runtime, in the precision its graph was exported in.
3. On a CUDA device: torch in bf16 where the GPU computes in it, else fp16.
4. On a CPU with AMX: torch in bf16, the fastest there.
5. On other CPUs, a checkpoint that prefers its int8 ONNX Runtime graph (it says so in its config,
   ``preferred_cpu_runtime``: the embedded default does, measured faster than every torch option on
   CPUs without AMX and within 0.3 dev F1 of fp32) runs as that graph, built once and cached.
6. Else torch in bf16 where the CPU has bf16 matrix instructions (avx512_bf16, ARM's BF16), else fp32
   (bf16 without them is emulated and slower than fp32).
"""

from __future__ import annotations

from typing import Any

from ..execution import ONNXRUNTIME, TORCH, ExecutionPlan
from ..hardware import Hardware
from .artifacts import INT8_GRAPH, Artifacts


def device_name(device: Any) -> str:
    """A pipeline ``device`` argument as a torch device name: None or a negative int is the CPU, an
    int a CUDA device."""
    if device is None or (isinstance(device, int) and device < 0):
        return "cpu"
    return f"cuda:{device}" if isinstance(device, int) else str(device)


def plan(artifacts: Artifacts, hardware: Hardware, *, device: Any = None, dtype: Any = None, int8_graph: bool = True) -> ExecutionPlan:
    """How the punct-case pipeline runs the model whose files ``artifacts`` describes (the module
    docstring has the rule). ``device`` and ``dtype`` as given to ``pipeline()`` (None or "auto": not
    given); ``int8_graph=False`` leaves out a preferred int8 graph (where it cannot be built: no
    ``onnx``, no writable cache)."""
    where = device_name(device)
    device_type = where.split(":")[0]
    if dtype not in (None, "auto"):
        return ExecutionPlan(TORCH, str(dtype).removeprefix("torch."), where, "the dtype asked for")
    if artifacts.runtime == ONNXRUNTIME:
        return ExecutionPlan(ONNXRUNTIME, artifacts.onnx_precision or "fp32", "cpu", "an ONNX export: its graph fixes its precision")
    if device_type == "cuda":
        if hardware.cuda_bf16:
            return ExecutionPlan(TORCH, "bfloat16", where, "the GPU computes in bf16")
        return ExecutionPlan(TORCH, "float16", where, "the GPU has no bf16: fp16")
    if device_type != "cpu":
        return ExecutionPlan(TORCH, "float32", where, f"no precision rule for {device_type}: fp32")
    if hardware.amx:
        return ExecutionPlan(TORCH, "bfloat16", "cpu", "AMX: torch bf16 is the fastest here")
    if artifacts.preferred_cpu_runtime == INT8_GRAPH and int8_graph:
        return ExecutionPlan(
            ONNXRUNTIME, "int8", "cpu",
            "no AMX: the checkpoint's int8 ONNX Runtime graph (per-token scales) is faster than torch here, "
            "within 0.3 dev F1 of fp32",
        )
    if hardware.cpu_bf16:
        kind = "avx512_bf16" if hardware.avx512_bf16 else "ARM bf16"
        return ExecutionPlan(TORCH, "bfloat16", "cpu", f"{kind}: bf16 is faster than fp32 here")
    return ExecutionPlan(TORCH, "float32", "cpu", "no bf16 matrix instructions on this CPU: fp32")


__all__ = ["device_name", "plan"]

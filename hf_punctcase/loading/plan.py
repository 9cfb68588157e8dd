"""The one rule that picks how a punct-case model runs: a pure function of what the model is, what
the machine has, and what the caller asked for.

    plan(artifacts, hardware, device=None, dtype=None) -> ExecutionPlan

In order:

0. A runtime the caller names (``runtime="openvino"``, ``"onnxruntime"``, ``"torch"``) is used: a torch
   checkpoint then runs as its cached OpenVINO graph or int8 ONNX Runtime graph, or as torch by the
   rules below.
1. A dtype the caller names is used as it is, with torch.
2. An export folder runs with its runtime: ONNX Runtime in the precision its graph was exported in,
   OpenVINO in the CPU's (bf16 with AMX or avx512_bf16, else fp32).
3. On a CUDA device: torch in bf16 where the GPU computes in it, else fp16.
4. On an x86 CPU with bf16 matrix instructions (AMX, or avx512_bf16): a checkpoint that prefers a
   compiled graph on CPUs (``preferred_cpu_runtime``) runs as its OpenVINO graph in bf16 where OpenVINO
   is installed; else torch in bf16 (both measured faster than the int8 graph there).
5. On other CPUs, a checkpoint that prefers its int8 ONNX Runtime graph (it says so in its config,
   ``preferred_cpu_runtime``: the embedded default does, measured faster than every torch option on
   x86 CPUs without bf16 instructions and within 0.3 dev F1 of fp32; ARM CPUs, not measured, take it
   too) runs as that graph, built once and cached.
6. Else torch in bf16 where the CPU has bf16 matrix instructions (ARM's BF16), else fp32 (bf16 without
   them is emulated and slower than fp32).
"""

from __future__ import annotations

from typing import Any

from ..execution import ONNXRUNTIME, OPENVINO, TORCH, ExecutionPlan, check_runtime
from ..hardware import Hardware
from .artifacts import INT8_GRAPH, Artifacts


def device_name(device: Any) -> str:
    """A pipeline ``device`` argument as a torch device name: None or a negative int is the CPU, an
    int a CUDA device."""
    if device is None or (isinstance(device, int) and device < 0):
        return "cpu"
    return f"cuda:{device}" if isinstance(device, int) else str(device)


def plan(
    artifacts: Artifacts,
    hardware: Hardware,
    *,
    device: Any = None,
    dtype: Any = None,
    int8_graph: bool = True,
    runtime: str | None = None,
) -> ExecutionPlan:
    """How the punct-case pipeline runs the model whose files ``artifacts`` describes (the module
    docstring has the rule). ``device`` and ``dtype`` as given to ``pipeline()`` (None or "auto": not
    given); ``runtime`` as given to the loaders (None or "auto": the rule's); ``int8_graph=False``
    leaves out a compiled graph (where it cannot be built: no converter, no writable cache)."""
    where = device_name(device)
    device_type = where.split(":")[0]
    ov_precision = hardware.openvino_precision
    check_runtime(runtime)
    if runtime not in (None, "auto"):
        if runtime != (artifacts.runtime or TORCH) and artifacts.runtime not in (None, TORCH):
            raise ValueError(f"the model is an export run by {artifacts.runtime}: it cannot run with {runtime}")
        if runtime != TORCH and (device_type != "cpu" or dtype not in (None, "auto")):
            raise ValueError(f"runtime {runtime} runs on the CPU in the precision it picks: no device or dtype to ask for")
        if runtime == TORCH:
            int8_graph = False  # torch itself, not a graph built from it
        if runtime == OPENVINO and int8_graph:
            return ExecutionPlan(OPENVINO, ov_precision, "cpu", "the runtime asked for")
        if runtime == ONNXRUNTIME and artifacts.runtime != ONNXRUNTIME and int8_graph:
            return ExecutionPlan(ONNXRUNTIME, "int8", "cpu", "the runtime asked for: the checkpoint's int8 graph")
    if dtype not in (None, "auto"):
        return ExecutionPlan(TORCH, str(dtype).removeprefix("torch."), where, "the dtype asked for")
    if artifacts.runtime == ONNXRUNTIME:
        return ExecutionPlan(ONNXRUNTIME, artifacts.onnx_precision or "fp32", "cpu", "an ONNX export: its graph fixes its precision")
    if artifacts.runtime == OPENVINO:
        return ExecutionPlan(OPENVINO, ov_precision, "cpu", "an OpenVINO export: run in the CPU's precision")
    if device_type == "cuda":
        if hardware.cuda_bf16:
            return ExecutionPlan(TORCH, "bfloat16", where, "the GPU computes in bf16")
        return ExecutionPlan(TORCH, "float16", where, "the GPU has no bf16: fp16")
    if device_type != "cpu":
        return ExecutionPlan(TORCH, "float32", where, f"no precision rule for {device_type}: fp32")
    if hardware.amx or hardware.avx512_bf16:
        kind = "AMX" if hardware.amx else "avx512_bf16"
        if artifacts.preferred_cpu_runtime == INT8_GRAPH and hardware.openvino and int8_graph:
            return ExecutionPlan(
                OPENVINO, "bf16", "cpu", f"{kind}: the checkpoint's OpenVINO graph in bf16 is the fastest here"
            )
        return ExecutionPlan(TORCH, "bfloat16", "cpu", f"{kind}: torch bf16 is faster than fp32 and the int8 graph here")
    if artifacts.preferred_cpu_runtime == INT8_GRAPH and int8_graph:
        return ExecutionPlan(
            ONNXRUNTIME, "int8", "cpu",
            "no AMX or avx512_bf16: the checkpoint's int8 ONNX Runtime graph (per-token scales) is faster than "
            "torch here, within 0.3 dev F1 of fp32",
        )
    if hardware.arm_bf16:
        return ExecutionPlan(TORCH, "bfloat16", "cpu", "ARM bf16: bf16 is faster than fp32 here")
    return ExecutionPlan(TORCH, "float32", "cpu", "no bf16 matrix instructions on this CPU: fp32")


__all__ = ["device_name", "plan"]

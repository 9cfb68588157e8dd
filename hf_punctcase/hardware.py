"""What this machine's processors can do, and the one rule that picks how a model runs on them.

    >>> import hf_punctcase
    >>> hf_punctcase.detect_hardware().describe()
    'AMD EPYC (x86_64, AVX2; no AMX, no avx512_bf16, no VNNI), 2 CPUs'
    >>> hf_punctcase.plan_execution("default")
    ExecutionPlan(runtime='onnxruntime', precision='int8', device='cpu', reason='...')

Everything here is read off the running machine (no CPU is assumed): torch's probes of the x86 ISA
(AMX tiles, avx512_bf16, VNNI), the kernel's list of ARM features (bf16), CUDA's own report. The rule,
in :func:`plan_execution`, in order:

1. A dtype the caller names is used as it is, with torch.
2. An ONNX export folder runs with ONNX Runtime, in the precision its graph was exported in.
3. On a CUDA device: torch in bf16 where the GPU computes in it, else fp16.
4. The embedded default on a CPU: its int8 ONNX Runtime graph (built once from the shipped weights and
   cached, :mod:`hf_punctcase.export.cache`; int8 products with per-token activation scales), faster
   than every torch option on CPUs without AMX and within 0.3 dev F1 of fp32 on every dev set
   (docs/benchmarks.md). On a CPU with AMX, torch in bf16, which is faster there.
5. Any other checkpoint on a CPU: torch in bf16 where the CPU has bf16 matrix instructions (AMX,
   avx512_bf16, ARM's BF16), else fp32 (bf16 without them is emulated and slower than fp32).
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .execution import ONNXRUNTIME, TORCH, ExecutionPlan


@dataclass(frozen=True)
class Hardware:
    """What :func:`detect_hardware` read off this machine."""

    cpu: str
    machine: str
    cpus: int
    #: torch's name for the widest x86 vector ISA it dispatches to ("AVX512", "AVX2", ...), or "DEFAULT".
    isa: str
    amx: bool = False
    avx512_bf16: bool = False
    vnni: bool = False
    arm_bf16: bool = False
    cuda: tuple[str, ...] = field(default_factory=tuple)
    cuda_bf16: bool = False

    @property
    def cpu_bf16(self) -> bool:
        """bf16 matrix instructions on the CPU (AMX, avx512_bf16 or ARM's BF16): bf16 beats fp32 there."""
        return self.amx or self.avx512_bf16 or self.arm_bf16

    def describe(self) -> str:
        """One line: CPU, ISA and the features the rule reads, GPUs if any."""
        if self.machine in ("aarch64", "arm64"):
            features = "bf16" if self.arm_bf16 else "no bf16"
        else:
            features = ", ".join(
                name if present else f"no {name}"
                for name, present in (("AMX", self.amx), ("avx512_bf16", self.avx512_bf16), ("VNNI", self.vnni))
            )
        line = f"{self.cpu} ({self.machine}, {self.isa}; {features}), {self.cpus} CPUs"
        if self.cuda:
            line += f"; CUDA: {', '.join(self.cuda)} ({'bf16' if self.cuda_bf16 else 'fp16'})"
        return line

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cuda": list(self.cuda), "description": self.describe()}


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        name = _sysctl("machdep.cpu.brand_string")
        if name:
            return name
    return platform.processor() or platform.machine() or "unknown CPU"


def _sysctl(key: str) -> str:
    try:
        return subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _arm_bf16() -> bool:
    if platform.system() == "Darwin":
        return _sysctl("hw.optional.arm.FEAT_BF16") == "1"
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("features"):
                return "bf16" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def _torch_probe(name: str) -> bool:
    import torch

    probe = getattr(torch.cpu, name, None)
    try:
        return bool(probe and probe())
    except RuntimeError:
        return False


@functools.cache
def detect_hardware() -> Hardware:
    """This machine's CPU (name, ISA, AMX, avx512_bf16, VNNI, ARM bf16) and CUDA devices, read once."""
    import torch

    machine = platform.machine().lower()
    cuda: tuple[str, ...] = ()
    cuda_bf16 = False
    if torch.cuda.is_available():
        cuda = tuple(torch.cuda.get_device_name(index) for index in range(torch.cuda.device_count()))
        cuda_bf16 = bool(torch.cuda.is_bf16_supported())
    x86 = machine in ("x86_64", "amd64", "i686", "x86")
    return Hardware(
        cpu=_cpu_name(),
        machine=machine,
        cpus=os.cpu_count() or 1,
        isa=torch.backends.cpu.get_cpu_capability(),
        amx=x86 and _torch_probe("_is_amx_tile_supported"),
        avx512_bf16=x86 and _torch_probe("_is_avx512_bf16_supported"),
        vnni=x86 and _torch_probe("_is_vnni_supported"),
        arm_bf16=(not x86) and _arm_bf16(),
        cuda=cuda,
        cuda_bf16=cuda_bf16,
    )


def _device_name(device: Any) -> str:
    """A pipeline ``device`` argument as a torch device name: None or a negative int is the CPU, an
    int a CUDA device."""
    if device is None or (isinstance(device, int) and device < 0):
        return "cpu"
    return f"cuda:{device}" if isinstance(device, int) else str(device)


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def plan_execution(
    model: str | os.PathLike | None = "default",
    *,
    device: Any = None,
    dtype: Any = None,
    hardware: Hardware | None = None,
    int8_graph: bool = True,
) -> ExecutionPlan:
    """The runtime, precision and device the punct-case pipeline uses for ``model`` (the module
    docstring has the rule). ``model`` is ``"default"`` / None (the embedded default), another
    embedded name, a checkpoint folder, or what :func:`~hf_punctcase.checkpoints.resolve` made of one
    (a Hub repo id plans as a torch checkpoint); ``device`` and ``dtype`` as given to ``pipeline()`` (None or
    "auto": not given). ``hardware`` defaults to :func:`detect_hardware`; ``int8_graph=False`` leaves
    out the default's int8 graph (where it cannot be built: no ``onnx``, no writable cache)."""
    from .checkpoints import ResolvedModel
    from .embedded import DEFAULT_MODEL_DIR, embedded_model_dir
    from .formats import format_of

    hardware = hardware or detect_hardware()
    device_type = _device_name(device).split(":")[0]
    if isinstance(model, ResolvedModel):
        folder, runtime = model.folder, model.runtime
    else:
        folder = embedded_model_dir(model) or (Path(model) if model is not None else None)
        found = format_of(folder) if folder is not None else None
        runtime = found.runtime if found is not None else None
    if dtype not in (None, "auto"):
        return ExecutionPlan(TORCH, _dtype_name(dtype), _device_name(device), "the dtype asked for")
    if folder is not None and runtime == ONNXRUNTIME:
        return ExecutionPlan(ONNXRUNTIME, _onnx_precision(folder), "cpu", "an ONNX export: its graph fixes its precision")
    if device_type == "cuda":
        if hardware.cuda_bf16:
            return ExecutionPlan(TORCH, "bfloat16", _device_name(device), "the GPU computes in bf16")
        return ExecutionPlan(TORCH, "float16", _device_name(device), "the GPU has no bf16: fp16")
    if device_type != "cpu":
        return ExecutionPlan(TORCH, "float32", _device_name(device), f"no precision rule for {device_type}: fp32")
    is_default = folder is not None and folder.resolve() == DEFAULT_MODEL_DIR.resolve()
    if hardware.amx:
        return ExecutionPlan(TORCH, "bfloat16", "cpu", "AMX: torch bf16 is the fastest here")
    if is_default and int8_graph:
        return ExecutionPlan(
            ONNXRUNTIME, "int8", "cpu",
            "no AMX: the default's int8 ONNX Runtime graph (per-token scales) is faster than torch here, "
            "within 0.3 dev F1 of fp32",
        )
    if hardware.cpu_bf16:
        kind = "avx512_bf16" if hardware.avx512_bf16 else "ARM bf16"
        return ExecutionPlan(TORCH, "bfloat16", "cpu", f"{kind}: bf16 is faster than fp32 here")
    return ExecutionPlan(TORCH, "float32", "cpu", "no bf16 matrix instructions on this CPU: fp32")


def _onnx_precision(folder: Path) -> str:
    from .runtime.onnx_backend import read_export_info

    try:
        return str(read_export_info(folder).get("precision", "fp32"))
    except (OSError, ValueError):
        return "fp32"


__all__ = ["ExecutionPlan", "Hardware", "ONNXRUNTIME", "TORCH", "detect_hardware", "plan_execution"]

"""What this machine's processors can do, read off the running machine (no CPU is assumed).

    >>> import hf_punctcase
    >>> hf_punctcase.hardware.detect_hardware().describe()
    'AMD EPYC (x86_64, AVX2; no AMX, no avx512_bf16, no VNNI), 2 CPUs'

torch's probes of the x86 ISA (AMX tiles, avx512_bf16, VNNI), the kernel's list of ARM features
(bf16), CUDA's own report. The rule that picks a runtime and precision from it is
:func:`hf_punctcase.loading.plan.plan`.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any



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
    #: OpenVINO is installed (the runtime the plan picks on CPUs with AMX or avx512_bf16).
    openvino: bool = False

    @property
    def x86_bf16(self) -> bool:
        """bf16 matrix instructions on an x86 CPU (AMX or avx512_bf16): OpenVINO runs graphs in bf16 there."""
        return self.amx or self.avx512_bf16

    @property
    def openvino_precision(self) -> str:
        """The precision OpenVINO runs a graph in here: ``"bf16"`` with bf16 matrix instructions on an
        x86 CPU, else ``"fp32"``."""
        return "bf16" if self.x86_bf16 else "fp32"

    @property
    def cpu_bf16(self) -> bool:
        """bf16 matrix instructions on the CPU (AMX, avx512_bf16 or ARM's BF16): bf16 beats fp32 there."""
        return self.x86_bf16 or self.arm_bf16

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


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here (found, not imported)."""
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


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
        openvino=installed("openvino"),
    )


__all__ = ["Hardware", "detect_hardware"]

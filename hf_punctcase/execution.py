"""How a model runs: :class:`ExecutionPlan`, what :func:`hf_punctcase.loading.plan_execution` decides and every
punct-case pipeline carries as ``execution_plan``. No package imports: it travels in the remote-code bundle."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Runtimes a plan can name.
TORCH, ONNXRUNTIME, OPENVINO = "torch", "onnxruntime", "openvino"
RUNTIMES = (TORCH, ONNXRUNTIME, OPENVINO)
#: The dtypes a punct-case model may be asked to run in (``dtype=`` of the loaders, ``--dtype``): "auto"
#: lets the plan choose.
DTYPE_NAMES = ("auto", "float32", "bfloat16", "float16")


def check_dtype(dtype: Any) -> None:
    """Raise unless ``dtype`` is None, one of :data:`DTYPE_NAMES` or the torch dtype of one: torch would
    answer a misspelt name with an AttributeError from deep inside loading, and take a number silently."""
    import torch

    if dtype is None or (isinstance(dtype, torch.dtype) and str(dtype).removeprefix("torch.") in DTYPE_NAMES):
        return
    if not isinstance(dtype, (str, torch.dtype)):
        raise TypeError(f"dtype must be one of {', '.join(DTYPE_NAMES)} (a name or a torch.dtype), not {type(dtype).__name__} {dtype!r}")
    if str(dtype).removeprefix("torch.") not in DTYPE_NAMES:
        raise ValueError(f"dtype {str(dtype)!r} is not one of {', '.join(DTYPE_NAMES)}")


def check_runtime(runtime: Any) -> None:
    """Raise ValueError unless ``runtime`` is None, ``"auto"`` or one of :data:`RUNTIMES`."""
    if runtime not in (None, "auto") and runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of auto, {', '.join(RUNTIMES)}; got {runtime!r}")


@dataclass(frozen=True)
class ExecutionPlan:
    """How a model runs: which runtime, in which precision, on which device, and why."""

    runtime: str
    precision: str
    device: str
    reason: str

    @property
    def torch_dtype(self):
        """The torch dtype of a torch plan (None for ONNX Runtime, whose graph fixes its precision)."""
        if self.runtime != TORCH:
            return None
        import torch

        return getattr(torch, self.precision)

    def describe(self) -> str:
        return f"{self.runtime} {self.precision} on {self.device}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


__all__ = ["DTYPE_NAMES", "ONNXRUNTIME", "OPENVINO", "RUNTIMES", "TORCH", "ExecutionPlan", "check_dtype", "check_runtime"]

"""The interface every model format implements (:mod:`hf_punctcase.formats`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class ModelFormat:
    """One way a checkpoint folder can hold a model, and the runtime that runs it.

    Attributes:
        name: the format's name (``"torch"``, ``"onnx"``).
        runtime: the runtime that runs it (:data:`hf_punctcase.execution.TORCH`, ``ONNXRUNTIME``, ...).
        files: the files that make a folder this format, for error messages.
        description: what such a folder is, for error messages.
    """

    name: str = ""
    runtime: str = ""
    files: str = ""
    description: str = ""

    def detect(self, folder: Path) -> bool:
        """Whether ``folder``'s file names say it is this format (contents are for :meth:`check`)."""
        raise NotImplementedError

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        """Check the format's own files without loading the model; raise
        :class:`~hf_punctcase.checkpoints.CheckpointError` (or FileNotFoundError) naming the folder.
        ``config`` is the parsed config.json, ``labels`` its label lists (already checked)."""
        raise NotImplementedError

    def load_model(self, folder: str, **kwargs: Any):
        """The model in ``folder`` as the punct-case pipeline runs it, for a format whose runtime is
        not torch (a torch checkpoint is loaded by transformers' ``from_pretrained``).
        ``AutoModelForJointTokenClassification.from_pretrained`` calls it with its own keyword
        arguments (``dtype``, ``trust_remote_code``, ...), which a format takes or refuses."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class GraphModel:
    """What the ``punct-case`` pipeline asks of a model that a runtime other than torch runs on the CPU
    (``config``, ``device``, ``dtype``, ``to``, ``eval``, ``save_pretrained``); a subclass sets
    :attr:`runtime`, :attr:`runtime_name` and :attr:`files`, and gives the model its ``backend``.

    Attributes:
        runtime: the runtime's name in plans (:data:`hf_punctcase.execution.ONNXRUNTIME`, ...).
        runtime_name: the runtime as messages name it.
        files: the files of the folder that ``save_pretrained`` copies besides the config.
    """

    runtime: str = ""
    runtime_name: str = ""
    files: tuple[str, ...] = ()

    def __init__(self, folder):
        import torch
        from transformers import AutoConfig

        self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.folder = Path(folder)
        self.name_or_path = str(folder)
        self.config = AutoConfig.from_pretrained(self.folder)

    def _attach(self, backend) -> None:
        """Run with ``backend``, which must have an output for every task the config lists."""
        from ..tasks import tasks_of

        self.backend = backend
        backend.check_heads({task.name: task.labels_in(self.config) or () for task in tasks_of(self.config)})

    def to(self, device):
        import torch

        if torch.device(device).type != "cpu":
            raise ValueError(f"a model run by {self.runtime_name} runs on the CPU, not on {device}")
        return self

    def eval(self):
        return self

    #: The torch checkpoint this graph was built from (the plan's cached graph of a checkpoint), or None
    #: for a graph folder loaded as such (an export).
    source_checkpoint: Path | None = None

    def save_pretrained(self, save_directory, **kwargs) -> None:
        """For a graph the plan built from a checkpoint: write that checkpoint, portable (its weights, in
        the dtype it stores them in, and the code that loads it without the plugin), as the torch model
        would: what is saved does not depend on the runtime the plan picked on this CPU. For a graph
        folder loaded as such (an export): copy the folder's :attr:`files` and write the config."""
        import shutil

        if self.source_checkpoint is not None:
            import torch
            from transformers import AutoModelForTokenClassification

            model = AutoModelForTokenClassification.from_pretrained(self.source_checkpoint, dtype=torch.float32, trust_remote_code=False)
            model.save_pretrained(save_directory, **kwargs)
            return
        target = Path(save_directory)
        target.mkdir(parents=True, exist_ok=True)
        for name in self.files:
            if (self.folder / name).is_file() and (self.folder / name).resolve() != (target / name).resolve():
                shutil.copyfile(self.folder / name, target / name)
        self.config.save_pretrained(target)


__all__ = ["GraphModel", "ModelFormat"]

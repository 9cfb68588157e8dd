"""The trust_remote_code bundle: the plugin's code, written flat next to a saved checkpoint.

transformers loads a checkpoint's own code only from flat sibling files with single-dot imports
(``from .labels import ...``). The library lives in sub-packages, so each save writes the modules a
checkpoint needs as flat files, their imports rewritten to those names, and points the config's
``auto_map`` and ``custom_pipelines`` at them. Nothing is kept in two copies in the repository:
the bundle is generated from the installed package at save and push time.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
from importlib.util import resolve_name
from pathlib import Path

from ..atomic_files import atomic_write_text

#: The task name under which a checkpoint's config lists the pipeline's code (``custom_pipelines``),
#: for ``pipeline(model=repo, trust_remote_code=True)`` without the plugin. It must differ from the
#: registered task "punct-case": transformers gives a checkpoint's custom pipeline priority over the
#: registered one for the same task name and then demands trust_remote_code, which would break
#: ``pipeline("punct-case", model=repo)`` for users who have the plugin.
REMOTE_CODE_TASK = "punct-case-remote-code"

#: Modules every bundle carries (flat file name → module), besides the model family's own: the
#: pipeline and what it and the model families import, written down rather than found by following
#: imports, so that what a checkpoint carries changes only when this list does.
SHARED_MODULES = {
    "labels.py": "hf_punctcase.labels",
    "tokenization.py": "hf_punctcase.tokenization",
    "restoration.py": "hf_punctcase.restoration",
    "restoration_words.py": "hf_punctcase.restoration.words",
    "restoration_windows.py": "hf_punctcase.restoration.windows",
    "restoration_options.py": "hf_punctcase.restoration.options",
    "restoration_decoding.py": "hf_punctcase.restoration.decoding",
    "restoration_sentences.py": "hf_punctcase.restoration.sentences",
    "backends.py": "hf_punctcase.pipelines.backends",
    "pipeline.py": "hf_punctcase.pipelines.punct_case",
    "execution.py": "hf_punctcase.execution",
    "inputs.py": "hf_punctcase.inputs",
    "tasks.py": "hf_punctcase.tasks",
    "fluency.py": "hf_punctcase.fluency",
    "dictation.py": "hf_punctcase.dictation",
    "paragraphs.py": "hf_punctcase.paragraphs",
    "layout.py": "hf_punctcase.layout",
    "runtime_onnx_backend.py": "hf_punctcase.runtime.onnx_backend",
    "common_modeling.py": "hf_punctcase.models.common.modeling",
    "common_configuration.py": "hf_punctcase.models.common.configuration",
}
#: The auto classes a checkpoint's model answers without the plugin.
MODEL_AUTO_CLASSES = ("AutoModel", "AutoModelForTokenClassification", "AutoModelForJointTokenClassification")


def bundle_modules(model_class: type) -> dict[str, str]:
    """Flat file name → module for a model class: its family's configuration and modeling modules and
    :data:`SHARED_MODULES`. :func:`flatten_module` refuses a bundled module that imports one of the
    package's modules outside this list, so the list cannot fall behind the code."""
    return {
        "configuration.py": model_class.config_class.__module__,
        "modeling.py": model_class.__module__,
        **SHARED_MODULES,
    }


def flatten_module(module_name: str, flat_names: dict[str, str]) -> str:
    """A module's source with every import of a bundled module rewritten as a single-dot import of
    its flat file; raises ValueError for an import of a package module outside the bundle (the
    bundle would not load without the plugin)."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    # A package's own module (its __init__) resolves relative imports inside the package.
    package = module_name if hasattr(module, "__path__") else module_name.rsplit(".", 1)[0]
    root = module_name.split(".", 1)[0]
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        target = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module or ""
        if not target.startswith(root + ".") and target != root:
            continue
        if target not in flat_names:
            raise ValueError(f"{module_name} imports {target}, which the remote-code bundle does not carry")
        line = lines[node.lineno - 1]
        written = "from " + "." * node.level + (node.module or "")
        start = line.index(written)
        lines[node.lineno - 1] = line[:start] + "from ." + flat_names[target] + line[start + len(written) :]
    header = f"# Generated from {module_name} by hf_punctcase: the code that loads this checkpoint without the plugin.\n"
    return header + "".join(lines)


class RemoteCodeExporter:
    """Hooks called by a model's ``save_pretrained`` (set by :func:`hf_punctcase.auto.register`)."""

    @staticmethod
    def prepare_config(model) -> None:
        """Point ``auto_map`` and ``custom_pipelines`` at the flat files, before the config is saved."""
        config = model.config
        auto_map = {"AutoConfig": f"configuration.{type(config).__name__}"}
        auto_map.update({name: f"modeling.{type(model).__name__}" for name in MODEL_AUTO_CLASSES})
        config.auto_map = auto_map
        config.custom_pipelines = {
            REMOTE_CODE_TASK: {
                "impl": "pipeline.PunctCasePipeline",
                "pt": ["AutoModelForTokenClassification"],
                "tf": [],
                "type": "text",
            }
        }

    @staticmethod
    def write_files(save_directory: str | os.PathLike, model) -> list[Path]:
        """Write the flat code files into ``save_directory``; returns their paths."""
        return write_bundle(save_directory, type(model))


#: Each model class's bundle, made once a process: every checkpoint a run saves carries the code the
#: run started with, even when the package's files are edited on disk while it trains.
_BUNDLES: dict[type, dict[str, str]] = {}


def bundle_sources(model_class: type) -> dict[str, str]:
    """Flat file name → source of ``model_class``'s remote-code bundle, read from disk the first time it
    is asked for in this process (a training run asks as it starts) and kept."""
    if model_class not in _BUNDLES:
        modules = bundle_modules(model_class)
        flat_names = {module: file_name[: -len(".py")] for file_name, module in modules.items()}
        _BUNDLES[model_class] = {file_name: flatten_module(module, flat_names) for file_name, module in modules.items()}
    return _BUNDLES[model_class]


def write_bundle(save_directory: str | os.PathLike, model_class: type) -> list[Path]:
    """Write ``model_class``'s remote-code bundle (:func:`bundle_sources`) into ``save_directory`` (each file atomically)."""
    written = []
    for file_name, source in bundle_sources(model_class).items():
        path = Path(save_directory) / file_name
        atomic_write_text(path, source)
        written.append(path)
    return written


__all__ = ["REMOTE_CODE_TASK", "RemoteCodeExporter", "bundle_modules", "bundle_sources", "flatten_module", "write_bundle"]

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

from collections.abc import Sequence
from typing import Any

from ..atomic_files import atomic_write_text
from ..tasks import head_tasks

#: The task name under which a checkpoint's config lists the pipeline's code (``custom_pipelines``),
#: for ``pipeline(model=repo, trust_remote_code=True)`` without the plugin. It must differ from the
#: registered task "punct-case": transformers gives a checkpoint's custom pipeline priority over the
#: registered one for the same task name and then demands trust_remote_code, which would break
#: ``pipeline("punct-case", model=repo)`` for users who have the plugin.
REMOTE_CODE_TASK = "punct-case-remote-code"

#: The flat files every bundle carries (file name → the modules written into it, in the order they
#: import each other), besides the model family's own and its heads' options: the pipeline and what it
#: and the model families import, written down rather than found by following imports, so that what a
#: checkpoint carries changes only when this list does. A package's modules share one file.
SHARED_FILES: dict[str, tuple[str, ...]] = {
    "labels.py": ("hf_punctcase.labels",),
    "tokenization.py": ("hf_punctcase.tokenization",),
    "inputs.py": ("hf_punctcase.inputs",),
    "tasks.py": ("hf_punctcase.tasks",),
    "execution.py": ("hf_punctcase.execution",),
    "restoration.py": (
        "hf_punctcase.restoration.words",
        "hf_punctcase.restoration.windows",
        "hf_punctcase.restoration.options",
        "hf_punctcase.restoration.sentences",
        "hf_punctcase.restoration.layout",
        "hf_punctcase.restoration.decoding",
        "hf_punctcase.restoration.engine",
        "hf_punctcase.restoration",
    ),
    "backends.py": ("hf_punctcase.backends.base", "hf_punctcase.backends.torch"),
    "pipeline.py": ("hf_punctcase.pipelines.punct_case",),
    "common.py": ("hf_punctcase.models.common.configuration", "hf_punctcase.models.common.modeling"),
}
#: The auto classes a checkpoint's model answers without the plugin.
MODEL_AUTO_CLASSES = ("AutoModel", "AutoModelForTokenClassification", "AutoModelForJointTokenClassification")


def option_files(config: Any) -> dict[str, str]:
    """Flat file name → module for the options of the head tasks a config lists (``disfluency.py``:
    :mod:`hf_punctcase.options.disfluency`), those the plugin declares; a head task registered from
    elsewhere carries no code (a checkpoint loaded without the plugin leaves its head out)."""
    files = {}
    for task in head_tasks(config) if config is not None else ():
        module = inspect.getmodule(task.option.run) if task.option is not None else None
        if module is not None and module.__name__.startswith("hf_punctcase."):
            files[module.__name__.rsplit(".", 1)[-1] + ".py"] = module.__name__
    return files


def bundle_files(model_class: type, config: Any = None) -> dict[str, tuple[str, ...]]:
    """Flat file name → modules for a model class and its config: the family's configuration and
    modeling modules, :data:`SHARED_FILES` and the options of the heads the config lists
    (:func:`option_files`). :func:`flatten_file` refuses a bundled module that imports one of the
    package's modules outside these files, so the list cannot fall behind the code."""
    return {
        "configuration.py": (model_class.config_class.__module__,),
        "modeling.py": (model_class.__module__,),
        **SHARED_FILES,
        **{name: (module,) for name, module in option_files(config).items()},
    }


def _top_level_names(tree: ast.Module) -> dict[str, object]:
    """The names a module binds at its top level, each with what it binds: an import's source, or the
    statement defining it."""
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            source = "." * getattr(node, "level", 0) + (getattr(node, "module", None) or "")
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (source, alias.name)
    return names


def _flat_source(module_name: str, flat_names: dict[str, str], file_name: str, earlier: Sequence[str], first: bool) -> str:
    """One module's source as it stands in the flat file ``file_name``: each import of a module in
    another flat file rewritten as a single-dot import of that file, each import of a module earlier in
    the same file left out (its names are defined above), ``from __future__`` kept only in the file's
    first module."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    # A package's own module (its __init__) resolves relative imports inside the package.
    package = module_name if hasattr(module, "__path__") else module_name.rsplit(".", 1)[0]
    root = module_name.split(".", 1)[0]
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.module == "__future__" and not node.level:
            if not first:
                lines[node.lineno - 1 : node.end_lineno] = ["\n"] * (node.end_lineno - node.lineno + 1)
            continue
        target = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module or ""
        if not target.startswith(root + ".") and target != root:
            continue
        if target not in flat_names:
            raise ValueError(f"{module_name} imports {target}, which the remote-code bundle does not carry")
        for alias in node.names:
            if f"{target}.{alias.name}" in flat_names:
                raise ValueError(f"{module_name} imports the module {target}.{alias.name} as a name, which a flat file cannot hold")
        if flat_names[target] == file_name[: -len(".py")]:
            if target not in earlier:
                raise ValueError(f"{module_name} imports {target}, which {file_name} holds after it")
            # Names already defined above in the same file: only a renamed one needs binding.
            indent = " " * node.col_offset
            kept = [f"{indent}{alias.asname} = {alias.name}\n" for alias in node.names if alias.asname and alias.asname != alias.name]
            if not kept and node.col_offset:
                kept = [f"{indent}pass\n"]  # the import was a block's only statement (``if TYPE_CHECKING:``)
            count = node.end_lineno - node.lineno + 1
            lines[node.lineno - 1 : node.end_lineno] = (kept + ["\n"] * count)[:count] if len(kept) <= count else kept
            continue
        line = lines[node.lineno - 1]
        written = "from " + "." * node.level + (node.module or "")
        start = line.index(written)
        lines[node.lineno - 1] = line[:start] + "from ." + flat_names[target] + line[start + len(written) :]
    return "".join(lines)


def flatten_file(file_name: str, modules: Sequence[str], flat_names: dict[str, str]) -> str:
    """The flat file ``file_name``: the sources of ``modules`` one after another (:func:`_flat_source`).
    Raises ValueError where two of them bind one top-level name to different things (``__all__``
    apart: the last module's stands), since the file would give one of them the other's."""
    bound: dict[str, tuple[str, object]] = {}
    parts = []
    for rank, module_name in enumerate(modules):
        source = _flat_source(module_name, flat_names, file_name, modules[:rank], first=rank == 0)
        for name, what in _top_level_names(ast.parse(source)).items():
            if name == "__all__":
                continue
            if name in bound and not (isinstance(what, tuple) and what == bound[name][1]):
                raise ValueError(f"{module_name} and {bound[name][0]} both define {name!r}, which {file_name} would hold once")
            bound.setdefault(name, (module_name, what))
        parts.append(source)
    header = f"# Generated from {', '.join(modules)} by hf_punctcase: the code that loads this checkpoint without the plugin.\n"
    return header + "\n\n".join(parts)


def flatten_module(module_name: str, flat_names: dict[str, str]) -> str:
    """A module's source as a flat file of its own (:func:`flatten_file`); ``flat_names``: module →
    flat file name (without ``.py``)."""
    return flatten_file(module_name.rsplit(".", 1)[-1] + ".py", (module_name,), flat_names)


#: The flat files that transformers loads as entry points (the config and model classes, the pipeline
#: class). It copies each with the files it imports into a folder of its own, so that each folder holds
#: its own ``tasks`` module and registry: each of these files registers the options itself. (The
#: modeling file imports the configuration, and registers through it.)
REGISTERING_FILES = ("configuration.py", "pipeline.py")


def _registering(config: Any) -> str:
    """The lines that import the option modules of a config's heads, which registers their tasks,
    written at the end of each of :data:`REGISTERING_FILES`."""
    lines = []
    for name, module_name in option_files(config).items():
        module = importlib.import_module(module_name)
        task = next(task for task in head_tasks(config) if task.option is not None and inspect.getmodule(task.option.run) is module)
        symbol = next(key for key, value in vars(module).items() if value is task)
        lines.append(f"from .{name[: -len('.py')]} import {symbol}  # noqa: E402,F401\n")
    if not lines:
        return ""
    return "\n\n# The options of the heads this checkpoint's config lists: importing them registers their tasks.\n" + "".join(lines)


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
        return write_bundle(save_directory, type(model), model.config)


#: Each bundle, made once a process for a model class and the options its heads serve: every checkpoint
#: a run saves carries the code the run started with, even when the package's files are edited on disk
#: while it trains.
_BUNDLES: dict[tuple[type, tuple[str, ...]], dict[str, str]] = {}


def bundle_sources(model_class: type, config: Any = None) -> dict[str, str]:
    """Flat file name → source of the remote-code bundle of ``model_class`` with ``config``'s heads, read
    from disk the first time it is asked for in this process (a training run asks as it starts) and kept."""
    key = (model_class, tuple(option_files(config)))
    if key not in _BUNDLES:
        files = bundle_files(model_class, config)
        flat_names = {module: file_name[: -len(".py")] for file_name, modules in files.items() for module in modules}
        sources = {file_name: flatten_file(file_name, modules, flat_names) for file_name, modules in files.items()}
        registering = _registering(config)
        for file_name in REGISTERING_FILES:
            sources[file_name] += registering
        _BUNDLES[key] = sources
    return _BUNDLES[key]


def write_bundle(save_directory: str | os.PathLike, model_class: type, config: Any = None) -> list[Path]:
    """Write the remote-code bundle (:func:`bundle_sources`) of ``model_class`` with ``config``'s heads
    into ``save_directory`` (each file atomically)."""
    written = []
    for file_name, source in bundle_sources(model_class, config).items():
        path = Path(save_directory) / file_name
        atomic_write_text(path, source)
        written.append(path)
    return written


__all__ = [
    "REMOTE_CODE_TASK", "RemoteCodeExporter", "SHARED_FILES", "bundle_files", "bundle_sources", "flatten_file", "flatten_module",
    "option_files", "write_bundle",
]

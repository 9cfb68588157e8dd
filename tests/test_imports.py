"""No import circles inside the package: modules import each other in one direction."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import hf_punctcase

ROOT = Path(hf_punctcase.__file__).resolve().parent


def _modules() -> dict[str, tuple[Path, bool]]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _import_graph(module_level_only: bool, with_packages: bool) -> dict[str, set[str]]:
    """module → the package's modules it imports. ``with_packages``: importing ``a.b.c`` also runs
    ``a/b/__init__.py``, an edge to ``a.b`` (unless the importer lies inside ``a.b``)."""
    modules = _modules()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(id(child) for child in ast.walk(node) if child is not node)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
            else:
                continue
            if module_level_only and id(node) in in_function:
                continue
            for target in targets:
                if not target.startswith(ROOT.name):
                    continue
                destination = known(target)
                if destination is None or destination == name:
                    continue
                graph[name].add(destination)
                if with_packages:
                    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
                    parts = destination.split(".")
                    graph[name].update(
                        ".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) not in own
                    )
    return graph


@pytest.mark.parametrize(
    "module_level_only, with_packages",
    [(False, False), (True, True)],
    ids=["every import between modules", "module-level imports with the packages they run"],
)
def test_no_import_circles(module_level_only, with_packages):
    graph = _import_graph(module_level_only, with_packages)
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"import circle: {' -> '.join(error.args[1])}")


def test_the_layers_written_in_pyproject_hold():
    """import-linter's contracts (pyproject.toml, [tool.importlinter]): the core imports nothing of
    loading, export, training, the command line or the apps; loading never calls back into a loader;
    the pipeline imports no loader; the torch-free runtime no torch. Imports inside functions count."""
    import shutil
    import subprocess

    command = shutil.which("lint-imports")
    if command is None:
        pytest.skip("import-linter is not installed (the [test] extra)")
    done = subprocess.run([command, "--no-cache"], cwd=ROOT.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_plain_install_restores_without_the_training_and_metric_extras_and_each_names_its_extra(tiny_model_dir):
    """accelerate (transformers' Trainer), evaluate and scikit-learn (the metric) are extras': where they
    are not installed, the plugin imports, registers, restores and saves without them, and each part
    that needs them says which extra installs them."""
    import json
    import subprocess
    import sys

    script = f"""
import json, sys, tempfile
for name in ("accelerate", "evaluate", "sklearn"):
    sys.modules[name] = None  # as where it is not installed: find_spec gives None, import fails
import hf_punctcase
from transformers import pipeline
pipe = pipeline("punct-case", model={tiny_model_dir!r})
text = pipe("so what are the risks i am not technical")["text"]
pipe.model.save_pretrained(tempfile.mkdtemp())
errors = {{}}
for module in ("hf_punctcase.training", "hf_punctcase.metrics"):
    try:
        __import__(module)
        errors[module] = ""
    except ImportError as caught:
        errors[module] = str(caught)
print(json.dumps({{"text": text, "errors": errors}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["text"].split()
    assert 'pip install "hf_punctcase[train]"' in found["errors"]["hf_punctcase.training"]
    assert 'pip install "hf_punctcase[metric]"' in found["errors"]["hf_punctcase.metrics"]
    assert "scikit-learn" in found["errors"]["hf_punctcase.metrics"]


def test_the_top_level_holds_the_names_users_import_and_moved_names_warn():
    import importlib
    import warnings

    assert all(hasattr(hf_punctcase, name) for name in hf_punctcase.__all__)
    # one folder constant per embedded model, each the folder EMBEDDED_MODELS gives for its name; beside
    # them no more than the thirteen names users import (the mapping, the flag, the classes and functions)
    folders = [name for name in hf_punctcase.__all__ if name.endswith("_MODEL_DIR")]
    assert sorted(getattr(hf_punctcase, name) for name in folders) == sorted(hf_punctcase.EMBEDDED_MODELS.values())
    for model, folder in hf_punctcase.EMBEDDED_MODELS.items():
        assert getattr(hf_punctcase, model.upper().replace("-", "_") + "_MODEL_DIR") == folder
    assert len(hf_punctcase.__all__) - len(folders) <= 13
    for name, module in hf_punctcase._MOVED.items():
        assert name not in hf_punctcase.__all__
        with pytest.warns(FutureWarning, match=rf"hf_punctcase\.{name} is now hf_punctcase\.{module}\.{name}"):
            found = getattr(hf_punctcase, name)
        assert found is getattr(importlib.import_module(f"hf_punctcase.{module}"), name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from hf_punctcase import PunctCasePipeline, load_pipeline  # noqa: F401
    with pytest.raises(AttributeError):
        hf_punctcase.no_such_name  # noqa: B018

"""What the commands share: the :class:`Fault` that ends a run with one line on stderr and exit code 2,
the output stream (stdout, or a file replaced whole; a fault in writing either is a :class:`Fault`),
the checks of a checkpoint folder, a device and the window sizes, and the model options
(:func:`add_model_arguments`) with the pipeline they load (:func:`load_restorer`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..execution import DTYPE_NAMES
from ..faults import one_line

#: Exit code of a fault the user can fix (bad path, bad file, bad checkpoint), as for usage errors.
EXIT_FAULT = 2
DTYPE_CHOICES = DTYPE_NAMES


class Fault(Exception):
    """A fault the user can fix; its message is one line naming the path and what is wrong."""


def print_error(message: object) -> int:
    """Print ``message`` as one ``hf-punctcase: error:`` line on stderr; returns :data:`EXIT_FAULT`."""
    print(f"hf-punctcase: error: {one_line(message)}", file=sys.stderr)
    return EXIT_FAULT


def check_windows(args: argparse.Namespace) -> int | None:
    """The exit code of a fault in ``--window-words`` / ``--context-words``, after printing it; None if
    they are valid."""
    from ..restoration import check_window_sizes

    try:
        check_window_sizes(args.window_words, args.context_words)
    except (TypeError, ValueError) as error:
        return print_error(f"--window-words {args.window_words} / --context-words {args.context_words}: {error}")
    return None


def checkpoint_folder(path: str) -> Path:
    """A local checkpoint folder, checked; ``default`` is the embedded model."""
    from ..checkpoints import resolve

    return resolve(path, local_only=True).folder


# ---- output -----------------------------------------------------------------------------------


class OutputStream:
    """The text stream output is written to: a fault in writing it (a full disk, a file size limit) is
    a :class:`Fault` naming the output. A reader that went away (``BrokenPipeError``) is left to
    :func:`hf_punctcase.cli.main`, which stops quietly."""

    def __init__(self, stream: IO[str], name: str, after_fault: str = "") -> None:
        self._stream = stream
        self._name = name
        self._after_fault = after_fault

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._fault(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._fault(error) from None

    def _fault(self, error: OSError) -> Fault:
        if self._name == "stdout":
            silence_stdout()  # what stays in its buffer must not fail again at the interpreter's exit
        return Fault(f"{self._name} could not be written ({error.strerror or one_line(error)}){self._after_fault}")


@contextlib.contextmanager
def output_stream(path: str | None) -> Iterator[OutputStream]:
    """The stream output goes to: stdout (UTF-8) for None or ``-``, or a file replaced whole only
    when the block ends without an exception (:func:`hf_punctcase.atomic_files.atomic_output`:
    through a link its target, a FIFO or a device written into). The temporary file is created on
    entry, so an output that cannot be written is reported before the model loads; a fault in
    writing it is a :class:`Fault`."""
    from ..atomic_files import atomic_output

    if path is None or path == "-":
        with _stdout() as stream:
            yield stream
        return
    name = f"output {path}"
    target = Path(path)
    if target.is_dir():
        raise Fault(f"{name} is a folder, not a file")
    real = Path(os.path.realpath(target))
    if not real.parent.is_dir():
        reason = "is not a folder" if real.parent.exists() else "does not exist"
        raise Fault(f"{name} cannot be written ({real.parent} {reason})")
    after_fault = "; it was left as it was" if target.is_file() else ""
    manager = atomic_output(target, encoding="utf-8", newline="\n")
    try:
        handle = manager.__enter__()
    except OSError as error:  # a loop of links (ELOOP) included
        raise Fault(f"{name} cannot be written ({error.strerror or one_line(error)})") from None
    try:
        yield OutputStream(handle, name, after_fault)
    except BaseException:
        manager.__exit__(*sys.exc_info())  # removes the temporary file, re-raises
        raise
    try:
        manager.__exit__(None, None, None)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise Fault(f"{name} could not be written ({error.strerror or one_line(error)}){after_fault}") from None


@contextlib.contextmanager
def _stdout() -> Iterator[OutputStream]:
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise Fault("stdout is closed: pass --output FILE")
    buffer = getattr(stream, "buffer", None)
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is None or encoding == "utf8":
        output = OutputStream(stream, "stdout")
        yield output
        output.flush()
        return
    # Output is UTF-8 whatever the locale says, as input is.
    stream.flush()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")
    try:
        output = OutputStream(wrapper, "stdout")
        yield output
        output.flush()
    finally:
        wrapper.detach()


def print_result(*lines: str) -> None:
    """Print the lines that report what a command did on stdout, as ``print`` would; a fault in
    writing them (a full disk) is a :class:`Fault`."""
    if sys.stdout is not None:
        OutputStream(sys.stdout, "stdout").write("".join(f"{line}\n" for line in lines))


def flush_stdout() -> None:
    """Flush stdout, where commands print their results; a fault (a full disk) is a :class:`Fault`
    here rather than a message from the interpreter's last flush."""
    if sys.stdout is not None and not getattr(sys.stdout, "closed", False):
        OutputStream(sys.stdout, "stdout").flush()


def silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush of what could not be
    written (a reader gone, a full disk) does not fail again."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        stdout = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stdout)
        os.close(null)


# ---- the model --------------------------------------------------------------------------------


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose and run the model (checkpoint, batch, device, dtype, windows, remote
    code), shared by the commands that restore text and by the benchmarks; :func:`load_restorer`
    reads them."""
    from ..execution import RUNTIMES
    from ..restoration import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS

    parser.add_argument(
        "-m", "--model", default="default",
        help="checkpoint folder, ONNX export folder, Hub repo id, or an embedded model: 'default' (6 layers), 'accurate' "
        "(12 layers, about twice as slow), 'on-device' (small int8 ONNX, run with ONNX Runtime) or 'open' (6 layers, trained only "
        "on text that allows commercial use) (default: %(default)s)",
    )
    parser.add_argument("-b", "--batch-size", type=int, default=16, help="windows per forward pass (default: %(default)s)")
    parser.add_argument(
        "--device", default="cpu", help="where the model runs: cpu, cuda, cuda:0, mps, ... (default: %(default)s)"
    )
    parser.add_argument(
        "--dtype", choices=DTYPE_CHOICES, default="auto",
        help="model dtype; auto: chosen by what this machine has (the default's int8 ONNX Runtime graph on CPUs "
        "without AMX or avx512_bf16, bf16 where the CPU or GPU computes in it, else fp32; --verbose says which) (default: %(default)s)",
    )
    parser.add_argument(
        "--runtime", choices=("auto", *RUNTIMES), default="auto",
        help="what runs the model; auto: chosen by what this machine has (--verbose says which); torch, onnxruntime "
        "(a checkpoint's int8 graph) or openvino (its OpenVINO graph, in bf16 where the CPU has bf16 units) force one "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--window-words", type=int, default=DEFAULT_WINDOW_WORDS, help="words per model window (default: %(default)s)"
    )
    parser.add_argument(
        "--context-words", type=int, default=DEFAULT_CONTEXT_WORDS,
        help="words of context on each side of a window's core (default: %(default)s)",
    )
    parser.add_argument(
        "--vote-windows", action="store_true",
        help="every window answers for all of its words, and each word's labels come from the average of the "
        "windows that hold it, weighted by its distance from their edges (the same windows run)",
    )
    parser.add_argument(
        "--trust-remote-code", action="store_true",
        help="allow a checkpoint whose model type this library does not know to run its own code (default: refuse)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true",
        help="say on stderr how the model runs (runtime, precision, device), why, and on what machine "
        "(one JSON object with --json)",
    )


def check_device(spec: str) -> None:
    """Raise a :class:`Fault` unless ``spec`` names a device this machine has."""
    import torch

    try:
        device = torch.device(spec)
    except (RuntimeError, ValueError) as error:
        raise Fault(f"--device {spec!r} is not a device ({one_line(error)})") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise Fault(f"--device {spec}: CUDA is not available on this machine")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise Fault(f"--device {spec}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise Fault(f"--device {spec}: MPS is not available on this machine")


def load_restorer(args: argparse.Namespace):
    """The pipeline that :func:`add_model_arguments`' options name; a fault is a :class:`Fault`."""
    from transformers.utils import logging as transformers_logging

    from ..registry import load_pipeline

    check_device(args.device)
    # The CLI shows its own bar over lines; transformers' loading bar would only add noise to stderr.
    transformers_logging.disable_progress_bar()
    try:
        restorer = load_pipeline(
            args.model,
            trust_remote_code=args.trust_remote_code,
            device=args.device,
            window_words=args.window_words,
            context_words=args.context_words,
            vote_windows=getattr(args, "vote_windows", False),
            dtype=args.dtype,
            runtime=getattr(args, "runtime", None),
            progress=False,  # no per-call bars: the CLI shows one bar for the whole input
        )
    except (OSError, ValueError) as error:  # FileNotFoundError and CheckpointError included
        raise Fault(one_line(error)) from None
    if getattr(args, "verbose", False):
        _report_execution(args.model, restorer.execution_plan, as_json=bool(getattr(args, "json", False)))
    return restorer


def _report_execution(model: str, plan, as_json: bool) -> None:
    """The model, how it runs and why, and the machine, on stderr (one JSON object, or one line)."""
    from ..hardware import detect_hardware

    machine = detect_hardware()
    if as_json:
        print(json.dumps({"model": model, "execution": plan.as_dict(), "machine": machine.as_dict()}), file=sys.stderr)
    else:
        print(f"model {model}: {plan.describe()}; machine: {machine.describe()}", file=sys.stderr)


def add_task_option_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for each task option (``--remove-disfluencies``, ``--spoken-punctuation``, ...)."""
    from ..tasks import task_options

    for option in task_options():
        parser.add_argument(option.flag, action="store_true", dest=option.name, help=option.help)


def chosen_task_options(args: argparse.Namespace, restorer) -> dict[str, bool]:
    """The task options the command line switched on, as the restorer's keywords; a :class:`Fault` for
    one whose head the model lacks."""
    from ..tasks import TASKS

    options = {}
    for task in TASKS.values():
        if task.option is not None and getattr(args, task.option.name, False):
            if task not in restorer.model_tasks:
                raise Fault(f"{task.option.flag} needs a model with a {task.title} head; {args.model} has none")
            options[task.option.name] = True
    return options

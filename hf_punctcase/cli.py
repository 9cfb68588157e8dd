"""Command line: ``hf-punctcase restore``, ``subtitles``, ``stats``, ``push``, ``card``, ``quantize`` and
``export-onnx``.

``restore`` reads a TEXT argument, ``--input FILE`` or stdin, one transcript a line, and writes one
line per input line. Text in and out is UTF-8 (a byte-order mark at the start of the input is
dropped). Lines are split on ``\\n`` only, for files and stdin alike: any other line or paragraph
separator (``\\r``, U+2028, ...) inside a line is whitespace between words. Input that is not valid
UTF-8 stops the run with the line number (``--errors strict``, the default) or has each undecodable
byte replaced by U+FFFD (``--errors replace``); a line with NUL bytes is binary data and always stops
the run.

An ``--output`` file is written through a temporary file in its folder and renamed into place only
after every line was restored, so it may be the input file itself, and a failure leaves it as it was.
Everything that can be checked before the model runs is checked first: the input is readable (a
regular file is read through once for its encoding and its line count), the output's folder is
writable and the checkpoint is whole (:func:`hf_punctcase.checkpoints.resolve`). A fault ends
the run with one line on stderr naming the path and what is wrong, and exit code 2. On stdout, lines
restored before a fault found later in streamed input (stdin, a pipe) have already been written.

Code from a model folder runs only with ``--trust-remote-code``; nothing ever prompts, and stdin is
read for transcripts only.

``subtitles`` reads one JSON file of timed words (Whisper's, with word timestamps; or a list of
``{"word", "start", "end"}``), restores it and writes SRT or WebVTT cues
(:mod:`hf_punctcase.subtitles`), with the same faults, output file handling and exit code.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .faults import one_line

#: Exit code of a fault the user can fix (bad path, bad file, bad checkpoint), as for usage errors.
EXIT_FAULT = 2
#: Transcripts per pipeline call, in units of --batch-size: a few batches a call keeps memory flat.
CALL_BATCHES = 8
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")


class Fault(Exception):
    """A fault the user can fix; its message is one line naming the path and what is wrong."""


def _error(message: object) -> int:
    print(f"hf-punctcase: error: {one_line(message)}", file=sys.stderr)
    return EXIT_FAULT


# ---- input ------------------------------------------------------------------------------------


@dataclass
class _Source:
    """Where transcripts come from: ``name`` for messages, ``lines()`` to read them (decoded), and
    their number where it is known before reading (a regular file, a TEXT argument)."""

    name: str
    lines: Callable[[], Iterator[str]]
    count: int | None


def _decode(raw: bytes, errors: str, name: str, number: int) -> str:
    if b"\0" in raw:
        raise Fault(f"{name}: line {number} contains NUL bytes (binary data, not text)")
    if number == 1 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8", errors)
    except UnicodeDecodeError as error:
        raise Fault(
            f"{name}: line {number} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start + 1} of the line); "
            "convert it to UTF-8 or pass --errors replace"
        ) from None


def _binary_lines(handle: IO[bytes], errors: str, name: str) -> Iterator[str]:
    # A binary stream splits lines on b"\n" only, whatever the platform (text mode would also split on "\r").
    for number, raw in enumerate(handle, 1):
        yield _decode(raw[:-1] if raw.endswith(b"\n") else raw, errors, name, number)


def _file_source(path: str, errors: str) -> _Source:
    name = f"input {path}"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise Fault(f"{name} does not exist") from None
    except OSError as error:
        raise Fault(f"{name} cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(mode):
        raise Fault(f"{name} is a folder, not a file")
    count = None
    if stat.S_ISREG(mode):
        # A regular file is read through once before the model loads: an encoding fault is found
        # before any output, and its line count sizes the progress bar. (A pipe or a device can be
        # read only once: it is checked as it streams.)
        try:
            with open(path, "rb") as handle:
                count = sum(1 for _ in _binary_lines(handle, errors, name))
        except OSError as error:
            raise Fault(f"{name} cannot be read ({error.strerror})") from None

    def lines() -> Iterator[str]:
        try:
            handle = open(path, "rb")
        except OSError as error:
            raise Fault(f"{name} cannot be read ({error.strerror})") from None
        with handle:
            yield from _binary_lines(handle, errors, name)

    return _Source(name, lines, count)


def _stdin_source(errors: str) -> _Source:
    stream = sys.stdin
    if stream is None or getattr(stream, "closed", False):
        raise Fault("stdin is closed: give a TEXT argument or --input FILE")
    buffer = getattr(stream, "buffer", None)

    def lines() -> Iterator[str]:
        if buffer is not None:
            yield from _binary_lines(buffer, errors, "stdin")
        else:  # a text stream without bytes underneath (io.StringIO): already decoded
            for line in stream:
                yield line[:-1] if line.endswith("\n") else line

    return _Source("stdin", lines, None)


def _text_source(text: str, errors: str) -> _Source:
    # Under a UTF-8 locale argv is decoded with surrogateescape: its undecodable bytes are lone
    # surrogates, turned back into those bytes here to get the same policy as bytes in a file.
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise Fault("the TEXT argument holds characters that are not text (lone surrogates)") from None
    if b"\0" in raw:
        raise Fault("the TEXT argument contains NUL characters")
    try:
        decoded = raw.decode("utf-8", errors)
    except UnicodeDecodeError as error:
        raise Fault(
            f"the TEXT argument is not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start + 1}); "
            "pass --errors replace"
        ) from None
    return _Source("TEXT", lambda: iter([decoded]), 1)


def _source(args) -> _Source:
    if args.text is not None:
        return _text_source(args.text, args.errors)
    if args.input and args.input != "-":
        return _file_source(args.input, args.errors)
    return _stdin_source(args.errors)


# ---- output -----------------------------------------------------------------------------------


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[IO[str]]:
    """The stream restored lines go to: stdout (UTF-8), or a file replaced whole only when the block
    ends without an exception. The temporary file is created on entry, so an output that cannot be
    written is reported before the model loads."""
    from .atomic_files import atomic_output

    if path is None:
        with _stdout() as stream:
            yield stream
        return
    name = f"output {path}"
    target = Path(path)
    if target.is_dir():
        raise Fault(f"{name} is a folder, not a file")
    if target.exists() and not target.is_file():
        # A device or a FIFO (/dev/null, a named pipe) cannot be replaced by a file: write to it.
        try:
            handle = open(target, "w", encoding="utf-8", newline="\n")
        except OSError as error:
            raise Fault(f"{name} cannot be written ({error.strerror})") from None
        with handle:
            yield handle
        return
    # Through a symbolic link, the file it points to is replaced, not the link.
    real = Path(os.path.realpath(target))
    if not real.parent.is_dir():
        reason = "is not a folder" if real.parent.exists() else "does not exist"
        raise Fault(f"{name} cannot be written ({real.parent} {reason})")
    manager = atomic_output(real, encoding="utf-8", newline="\n")
    try:
        handle = manager.__enter__()
    except OSError as error:
        raise Fault(f"{name} cannot be written ({error.strerror or one_line(error)})") from None
    try:
        yield handle
    except BaseException:
        manager.__exit__(*sys.exc_info())  # removes the temporary file, re-raises
        raise
    try:
        manager.__exit__(None, None, None)
    except OSError as error:
        raise Fault(f"{name} could not be written ({error.strerror or one_line(error)}); it was left as it was") from None


@contextlib.contextmanager
def _stdout() -> Iterator[IO[str]]:
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise Fault("stdout is closed: pass --output FILE")
    buffer = getattr(stream, "buffer", None)
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is None or encoding == "utf8":
        yield stream
        stream.flush()
        return
    # Output is UTF-8 whatever the locale says, as input is.
    stream.flush()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")
    try:
        yield wrapper
        wrapper.flush()
    finally:
        wrapper.detach()


# ---- restore ----------------------------------------------------------------------------------


def _batches(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _check_device(spec: str) -> None:
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

    from .registry import load_pipeline

    _check_device(args.device)
    # The CLI shows its own bar over lines; transformers' loading bar would only add noise to stderr.
    transformers_logging.disable_progress_bar()
    try:
        restorer = load_pipeline(
            args.model,
            trust_remote_code=args.trust_remote_code,
            device=args.device,
            window_words=args.window_words,
            context_words=args.context_words,
            dtype=args.dtype,
            progress=False,  # no per-call bars: the CLI shows one bar for the whole input
        )
    except (OSError, ValueError) as error:  # FileNotFoundError and CheckpointError included
        raise Fault(one_line(error)) from None
    if getattr(args, "verbose", False):
        _report_execution(args.model, restorer.execution_plan, as_json=bool(getattr(args, "json", False)))
    return restorer


def _report_execution(model: str, plan, as_json: bool) -> None:
    """The model, how it runs and why, and the machine, on stderr (one JSON object, or one line)."""
    from .hardware import detect_hardware

    machine = detect_hardware()
    if as_json:
        print(json.dumps({"model": model, "execution": plan.as_dict(), "machine": machine.as_dict()}), file=sys.stderr)
    else:
        print(f"model {model}: {plan.describe()}; machine: {machine.describe()}", file=sys.stderr)


def restore(args) -> int:
    from tqdm.auto import tqdm

    source = _source(args)
    show = args.progress if args.progress is not None else bool(sys.stderr is not None and sys.stderr.isatty())
    with _output(args.output if args.output not in (None, "-") else None) as out:
        restorer = load_restorer(args)
        if args.remove_disfluencies and not restorer.has_disfluency_head:
            raise Fault(f"--remove-disfluencies needs a model with a disfluency head; {args.model} has none")
        options = {"remove_disfluencies": True} if args.remove_disfluencies else {}
        with tqdm(total=source.count, unit="line", desc="punct-case", disable=not show, file=sys.stderr) as bar:
            for batch in _batches(source.lines(), args.batch_size * CALL_BATCHES):
                results = restorer(
                    batch, batch_size=args.batch_size, keep_punctuation=args.keep_punctuation, progress=False, **options
                )
                out.write(
                    "".join(
                        (json.dumps(result, ensure_ascii=False) if args.json else result["text"]) + "\n"
                        for result in results
                    )
                )
                out.flush()
                bar.update(len(batch))
    return 0


# ---- subtitles --------------------------------------------------------------------------------


def _read_json(path: str):
    """The parsed JSON of ``path`` ('-': stdin); a fault names the path and the position of a syntax error."""
    name = "stdin" if path == "-" else f"input {path}"
    try:
        if path == "-":
            stream = sys.stdin
            if stream is None or getattr(stream, "closed", False):
                raise Fault("stdin is closed: give an INPUT file")
            raw = stream.buffer.read() if getattr(stream, "buffer", None) is not None else stream.read()
        else:
            if os.path.isdir(path):
                raise Fault(f"{name} is a folder, not a file")
            with open(path, "rb") as handle:
                raw = handle.read()
    except FileNotFoundError:
        raise Fault(f"{name} does not exist") from None
    except OSError as error:
        raise Fault(f"{name} cannot be read ({error.strerror})") from None
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise Fault(f"{name} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start + 1})") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise Fault(f"{name} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None


def subtitles(args) -> int:
    from .subtitles import check_writers, restore_cues, whisper_words, write

    fmt = args.format
    if fmt is None:
        suffix = Path(args.output).suffix.lower().lstrip(".") if args.output not in (None, "-") else ""
        fmt = suffix if suffix in ("srt", "vtt") else "srt"
    try:
        check_writers(fmt)
    except ImportError as error:
        raise Fault(error) from None
    data = _read_json(args.input)
    name = "stdin" if args.input == "-" else f"input {args.input}"
    try:
        words = whisper_words(data)
    except ValueError as error:
        raise Fault(f"{name}: {error}") from None
    with _output(args.output if args.output not in (None, "-") else None) as out:
        restorer = load_restorer(args)
        _, cues = restore_cues(
            restorer, words, keep_punctuation=args.keep_punctuation, max_chars=args.max_chars,
            max_seconds=args.max_seconds, pause=args.pause, batch_size=args.batch_size,
        )
        out.write(write(cues, fmt))
        out.flush()
    return 0


# ---- stats, push, card ------------------------------------------------------------------------


def stats(args) -> int:
    from .data import FILE_SOURCES, SOURCES, load_punct_case_dataset
    from .data.stats import split_stats, stats_table

    names = args.corpus or [name for name in SOURCES if name not in FILE_SOURCES]
    unknown = sorted(set(names) - set(SOURCES))
    if unknown:
        return _error(f"unknown corpora {unknown}; known: {sorted(SOURCES)}")
    rows = []
    for name in names:
        try:
            corpus = load_punct_case_dataset(name, args.data_dir, max_words=args.max_words)
        except FileNotFoundError as error:
            return _error(error)
        rows += [(name, split, split_stats(corpus[split])) for split in corpus]
    print(stats_table(rows))
    return 0


def _checkpoint_folder(path: str) -> Path:
    """A local checkpoint folder, checked; ``default`` is the embedded model."""
    from .checkpoints import resolve

    return resolve(path, local_only=True).folder


def push(args) -> int:
    from .hub import push_to_hub

    try:
        folder = _checkpoint_folder(args.path)
        card = Path(args.card).read_text(encoding="utf-8") if args.card else None
        info = push_to_hub(
            folder, args.repo_id, card=card, revision=args.revision, private=args.private or None,
            commit_message=args.message, create_pr=args.create_pr,
        )
    except (FileNotFoundError, OSError, ValueError) as error:
        return _error(error)
    print(f"pushed {folder} to {args.repo_id}: commit {info.oid} ({info.commit_url})")
    return 0


def card(args) -> int:
    from .atomic_files import atomic_write_text
    from .cards.checkpoint import card_for_checkpoint

    try:
        folder = _checkpoint_folder(args.path)
    except (FileNotFoundError, OSError, ValueError) as error:
        return _error(error)
    text = card_for_checkpoint(folder, training_machine=args.training_machine, repo_id=args.repo_id)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        target = args.output or str(folder / "README.md")
        if os.path.exists(target) and not args.force:
            return _error(f"{target} exists (a published card?); use --force or -o")
        try:
            atomic_write_text(target, text)
        except OSError as error:
            return _error(f"output {target} cannot be written ({error.strerror or error})")
        print(f"wrote {target}")
    return 0


def quantize(args) -> int:
    from transformers.utils import logging as transformers_logging

    from .quantization import quantize_checkpoint, weights_size

    transformers_logging.disable_progress_bar()  # the result is one line; loading bars would only add noise
    if os.path.lexists(args.output) and not args.overwrite:
        return _error(f"output {args.output} exists; pass --overwrite to replace it")
    try:
        source_size = weights_size(_checkpoint_folder(args.path))
        target = quantize_checkpoint(args.path, args.output, overwrite=args.overwrite)
    except (OSError, ValueError, ImportError) as error:  # FileNotFoundError, FileExistsError, CheckpointError
        return _error(error)
    print(f"wrote {target}: weights {weights_size(target) / 1e6:.1f} MB (int8), from {source_size / 1e6:.1f} MB")
    return 0


def demo(args) -> int:
    try:
        from . import demo as app
    except ImportError as error:  # pragma: no cover - the message names the extra
        return _error(f"the demo needs gradio: pip install 'hf-punctcase[demo]' ({error})")
    if args.space_dir:
        if os.path.lexists(args.space_dir) and not args.overwrite:
            return _error(f"output {args.space_dir} exists; pass --overwrite to replace it")
        try:
            target = app.write_space(args.space_dir, overwrite=args.overwrite)
        except OSError as error:
            return _error(error)
        print(f"wrote {target}: README.md, app.py, requirements.txt (upload it as a Gradio Space)")
        return 0
    if args.model is not None and args.model not in app.MODELS.values():
        try:
            _checkpoint_folder(args.model)
        except (OSError, ValueError) as error:
            return _error(error)
    app.launch(args.model, host=args.host, port=args.port, share=args.share == "on")
    return 0


def export_onnx(args) -> int:
    from transformers.utils import logging as transformers_logging

    from .export.cache import keeps_float
    from .export.onnx import export_onnx as export

    transformers_logging.disable_progress_bar()  # the result is two lines; loading bars would only add noise
    texts = None
    if args.parity_file:
        try:
            with open(args.parity_file, encoding="utf-8") as handle:
                texts = [line.strip() for line in handle if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            return _error(f"parity file {args.parity_file} cannot be read ({getattr(error, 'strerror', None) or error})")
        if not texts:
            return _error(f"parity file {args.parity_file} holds no transcript")
    try:
        folder = _checkpoint_folder(args.path)
        result = export(
            folder, args.output, int8="per_token" if args.per_token else args.int8, per_channel=args.per_channel,
            weight_type=args.weight_type, keep_float=keeps_float if args.per_token else None,
            parity_texts=texts, overwrite=args.overwrite,
        )
    except (OSError, ValueError, ImportError, RuntimeError) as error:  # FileNotFoundError, FileExistsError, CheckpointError
        return _error(error)
    info, parity = result.info, result.parity
    precision = (
        "int8, per-token activation scales" if args.per_token
        else f"{args.weight_type} weights, per {'channel' if args.per_channel else 'tensor'}" if args.int8 else "fp32"
    )
    print(f"wrote {result.path}: model.onnx {info['size_bytes'] / 1e6:.1f} MB ({precision}), from {args.path}")
    print(
        f"agreement with the torch model on {parity['words']} words of {parity['texts']} transcripts: punctuation "
        f"{100 * parity['punct_agreement']:.1f}%, casing {100 * parity['case_agreement']:.1f}%, "
        f"{parity['identical_texts']}/{parity['texts']} texts identical, largest probability difference "
        f"{parity['max_probability_difference']:.2g}"
    )
    return 0


# ---- parser -----------------------------------------------------------------------------------


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose and run the model (checkpoint, batch, device, dtype, windows, remote
    code), shared by the commands that restore text and by the benchmarks; :func:`load_restorer`
    reads them."""
    from .pipelines.punct_case import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS

    parser.add_argument(
        "-m", "--model", default="default",
        help="checkpoint folder, ONNX export folder, Hub repo id, or an embedded model: 'default' (accurate) or "
        "'on-device' (small int8 ONNX, run with ONNX Runtime) (default: %(default)s)",
    )
    parser.add_argument("-b", "--batch-size", type=int, default=16, help="windows per forward pass (default: %(default)s)")
    parser.add_argument(
        "--device", default="cpu", help="where the model runs: cpu, cuda, cuda:0, mps, ... (default: %(default)s)"
    )
    parser.add_argument(
        "--dtype", choices=DTYPE_CHOICES, default="auto",
        help="model dtype; auto: chosen by what this machine has (the default's int8 ONNX Runtime graph on CPUs "
        "without AMX, bf16 where the CPU or GPU computes in it, else fp32; --verbose says which) (default: %(default)s)",
    )
    parser.add_argument(
        "--window-words", type=int, default=DEFAULT_WINDOW_WORDS, help="words per model window (default: %(default)s)"
    )
    parser.add_argument(
        "--context-words", type=int, default=DEFAULT_CONTEXT_WORDS,
        help="words of context on each side of a window's core (default: %(default)s)",
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hf-punctcase", description="Punctuation and truecasing for ASR transcripts.")
    commands = parser.add_subparsers(dest="command", required=True)
    restore_parser = commands.add_parser(
        "restore",
        help="restore punctuation and casing",
        description=(
            "Restore punctuation and casing. Reads TEXT, or --input (one transcript a line), or stdin; "
            "writes one line per input line. Input and output are UTF-8; lines end at \\n only."
        ),
    )
    restore_parser.add_argument("text", nargs="?", help="a transcript; omit to read --input or stdin")
    restore_parser.add_argument("-i", "--input", help="file with one transcript a line ('-' for stdin; default: stdin)")
    restore_parser.add_argument(
        "-o", "--output",
        help="write here instead of stdout; replaced whole only on success, so it may be the input file",
    )
    add_model_arguments(restore_parser)
    restore_parser.add_argument(
        "--errors", choices=("strict", "replace"), default="strict",
        help="input that is not UTF-8: strict stops with the line number, replace writes U+FFFD for each "
        "undecodable byte (default: %(default)s)",
    )
    restore_parser.add_argument("--json", action="store_true", help="one JSON result a line, with per-word labels and scores")
    restore_parser.add_argument(
        "--keep-punctuation", action="store_true", help="keep marks already in the input instead of predicting them"
    )
    restore_parser.add_argument(
        "--remove-disfluencies", action="store_true",
        help="leave out fillers, edit terms and the first copy of repeated or restarted words, and punctuate "
        "what is left (models with a disfluency head; with --json every input word keeps its entry, "
        "\"removed\" for those left out)",
    )
    restore_parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="a progress bar over lines on stderr (default: when stderr is a terminal)",
    )
    restore_parser.set_defaults(handler=restore)
    subtitles_parser = commands.add_parser(
        "subtitles",
        help="restore timed words (Whisper JSON) into SRT or WebVTT subtitles",
        description=(
            "Restore punctuation and casing in timed words and write subtitles. INPUT is Whisper's JSON with "
            "word timestamps ({\"segments\": [{\"words\": [{\"word\", \"start\", \"end\"}, ...]}, ...]}) or a "
            "JSON list of such words. Whisper's own marks and capitals are replaced by restored ones "
            "(--keep-punctuation keeps its marks). Cues end at sentence ends, and at a comma or a pause where "
            "a cue would pass --max-chars or --max-seconds."
        ),
    )
    subtitles_parser.add_argument("input", help="JSON file of timed words ('-' for stdin)")
    subtitles_parser.add_argument(
        "-o", "--output", help="write here instead of stdout; replaced whole only on success"
    )
    subtitles_parser.add_argument(
        "-f", "--format", choices=("srt", "vtt"),
        help="subtitle format (default: the output's extension, .srt or .vtt, else srt)",
    )
    subtitles_parser.add_argument("--max-chars", type=int, default=42, help="characters per cue (default: %(default)s)")
    subtitles_parser.add_argument(
        "--max-seconds", type=float, default=6.0, help="seconds per cue (default: %(default)s)"
    )
    subtitles_parser.add_argument(
        "--pause", type=float, default=0.8,
        help="a gap between words of at least this many seconds is a place to cut a cue too long (default: %(default)s)",
    )
    subtitles_parser.add_argument(
        "--keep-punctuation", action="store_true",
        help="keep Whisper's words as written and its marks (default: restore them from scratch)",
    )
    add_model_arguments(subtitles_parser)
    subtitles_parser.set_defaults(handler=subtitles)
    stats_parser = commands.add_parser(
        "stats", help="words and label counts per corpus and split", description="Words and label counts per corpus and split."
    )
    stats_parser.add_argument("corpus", nargs="*", help="corpora (default: every corpus in the data folder)")
    stats_parser.add_argument("--data-dir", help="corpus folder (default ../shared/data)")
    stats_parser.add_argument("--max-words", type=int, default=200, help="words per example (default: %(default)s)")
    stats_parser.set_defaults(handler=stats)
    push_parser = commands.add_parser(
        "push",
        help="upload a checkpoint to the Hugging Face Hub",
        description="Upload a checkpoint (weights, config, code for trust_remote_code, tokenizer, card) in one commit.",
    )
    push_parser.add_argument("path", help="checkpoint folder, or 'default' for the embedded model")
    push_parser.add_argument("repo_id", help="org/name on the Hub (created if missing)")
    push_parser.add_argument("--revision", help="branch to commit to (default main)")
    push_parser.add_argument("--private", action="store_true", help="create the repo as private")
    push_parser.add_argument("--card", help="a README.md to use instead of the checkpoint's own or a generated one")
    push_parser.add_argument("--message", default="Upload punct-case model", help="commit message (default: %(default)s)")
    push_parser.add_argument("--create-pr", action="store_true", help="open a pull request instead of committing")
    push_parser.set_defaults(handler=push)
    card_parser = commands.add_parser(
        "card",
        help="write a checkpoint's model card",
        description="Generate a model card from a checkpoint and its training_summary.json (figures as recorded).",
    )
    card_parser.add_argument("path", help="checkpoint folder, or 'default'")
    card_parser.add_argument("-o", "--output", help="where to write (default PATH/README.md; '-' for stdout)")
    card_parser.add_argument("--repo-id", help="the Hub repo the card will live in (for its usage lines)")
    card_parser.add_argument("--training-machine", help="the machine training ran on, if the record lacks it")
    card_parser.add_argument("--force", action="store_true", help="overwrite an existing card")
    card_parser.set_defaults(handler=card)
    quantize_parser = commands.add_parser(
        "quantize",
        help="store a checkpoint's weights as int8 (about half the size of fp16)",
        description=(
            "Write CHECKPOINT to OUTPUT with its encoder's Linear and Embedding weights stored as int8, one scale "
            "per row (torchao weight-only). OUTPUT loads like any checkpoint, computing in bf16 or fp32. It is "
            "written next to its place and renamed there only when complete."
        ),
    )
    _add_folder_output_arguments(quantize_parser)
    quantize_parser.set_defaults(handler=quantize)
    onnx_parser = commands.add_parser(
        "export-onnx",
        help="export a checkpoint to ONNX (fp32 or int8) for ONNX Runtime",
        description=(
            "Write CHECKPOINT (either model family) to OUTPUT as an ONNX graph (model.onnx; inputs input_ids and "
            "attention_mask, one <task>_logits output per head) with its config, tokenizer and card. "
            "pipeline(\"punct-case\", model=OUTPUT) runs it with ONNX Runtime, and so does hf_punctcase.runtime "
            "without torch. The export restores a few transcripts with the torch and the ONNX model and prints how "
            "far their labels agree. OUTPUT is written next to its place and renamed there only when complete."
        ),
    )
    _add_folder_output_arguments(onnx_parser)
    onnx_parser.add_argument(
        "--int8", action="store_true", help="quantize the graph's weights to int8 (ONNX Runtime dynamic quantization)"
    )
    onnx_parser.add_argument(
        "--per-channel", action="store_true", help="with --int8: one scale per output channel instead of per tensor"
    )
    onnx_parser.add_argument(
        "--per-token", action="store_true",
        help="int8 matrix products with one activation scale per token and per-channel weights (feed-forward "
        "outputs and heads in fp32), as the default runs on CPUs without AMX: within 0.3 dev F1 of fp32, "
        "independent of the batch",
    )
    onnx_parser.add_argument(
        "--weight-type", choices=("uint8", "int8"), default="uint8",
        help="with --int8: uint8 (symmetric, exact on every x86 CPU; default) or int8 (faster on CPUs with VNNI, "
        "saturates on x86 CPUs without it)",
    )
    onnx_parser.add_argument(
        "--parity-file", metavar="FILE",
        help="transcripts (one a line) to compare the torch and ONNX models on (default: a few built-in ones)",
    )
    onnx_parser.set_defaults(handler=export_onnx)
    demo_parser = commands.add_parser(
        "demo",
        help="try the models in a browser (a Gradio app; the [demo] extra)",
        description=(
            "Serve a Gradio app: a transcript box with the restored text, low-confidence words highlighted, "
            "switches for disfluency removal, punctuation or casing only and the model, and Whisper JSON to "
            "SRT/WebVTT. Its API endpoint 'restore' takes the transcript and returns the restored text. "
            "--space-dir writes the files of a Hugging Face Space serving the same app instead."
        ),
    )
    demo_parser.add_argument(
        "--model", default=None,
        help="a checkpoint folder or embedded name to offer first (default: the default, then the on-device model)",
    )
    demo_parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default: %(default)s)")
    demo_parser.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or the next free one)")
    demo_parser.add_argument(
        "--share", choices=("off", "on"), default="off",
        help="on: ask Gradio for a public share link (needs internet; default: %(default)s)",
    )
    demo_parser.add_argument("--space-dir", metavar="DIR", help="write a Space's README.md, app.py and requirements.txt to DIR and exit")
    demo_parser.add_argument("--overwrite", action="store_true", help="with --space-dir: replace DIR if it exists")
    demo_parser.set_defaults(handler=demo)
    return parser


def _add_folder_output_arguments(parser: argparse.ArgumentParser) -> None:
    """CHECKPOINT, OUTPUT and --overwrite of the commands that write a checkpoint folder."""
    parser.add_argument("path", metavar="CHECKPOINT", help="checkpoint folder, or 'default' for the embedded model")
    parser.add_argument("output", metavar="OUTPUT", help="the folder to write; must not exist unless --overwrite")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace OUTPUT if it exists (once the new folder is complete)"
    )


def main(argv: list[str] | None = None) -> int:
    from .restoration import check_window_sizes

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "restore":
        if args.text is not None and args.input:
            parser.error("give a TEXT argument or --input, not both")
        if args.batch_size < 1:
            parser.error("--batch-size must be ≥ 1")
        try:
            check_window_sizes(args.window_words, args.context_words)
        except (TypeError, ValueError) as error:
            return _error(f"--window-words {args.window_words} / --context-words {args.context_words}: {error}")
    if args.command == "export-onnx" and args.per_channel and not args.int8:
        parser.error("--per-channel applies to --int8 export only")
    if args.command == "export-onnx" and args.per_token and args.int8:
        parser.error("--per-token and --int8 are two int8 exports: choose one")
    if args.command == "subtitles":
        if args.batch_size < 1:
            parser.error("--batch-size must be ≥ 1")
        if args.max_chars < 1:
            parser.error("--max-chars must be ≥ 1")
        if not args.max_seconds > 0:
            parser.error("--max-seconds must be > 0")
        if not args.pause >= 0:
            parser.error("--pause must be ≥ 0")
        try:
            check_window_sizes(args.window_words, args.context_words)
        except (TypeError, ValueError) as error:
            return _error(f"--window-words {args.window_words} / --context-words {args.context_words}: {error}")
    try:
        return args.handler(args)
    except Fault as fault:
        return _error(fault)
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly; point stdout at devnull so that Python's
        # final flush does not raise again.
        with contextlib.suppress(OSError, AttributeError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("hf-punctcase: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

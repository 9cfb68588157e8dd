"""``hf-punctcase restore``: transcripts from a TEXT argument, ``--input FILE`` or stdin, one a line,
restored to one line each on stdout or ``--output``.

Input is read as UTF-8 bytes split on ``\\n`` only (a byte-order mark at the start is dropped); a
regular file is read through once before the model loads, to find an encoding fault and count its
lines, while stdin and pipes are checked as they stream.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from .common import (
    Fault, add_model_arguments, add_task_option_arguments, check_windows, chosen_task_options, load_restorer, output_stream,
)

#: Transcripts per pipeline call, in units of --batch-size: a few batches a call keeps memory flat.
CALL_BATCHES = 8


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


# ---- restore ----------------------------------------------------------------------------------


def _batches(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    """Lines in batches of ``size``. A fault in reading a line (not UTF-8, NUL bytes) comes after the
    batch of the lines before it, so that every line before a bad one is restored and written first."""
    batch: list[str] = []
    try:
        for line in lines:
            batch.append(line)
            if len(batch) == size:
                yield batch
                batch = []
    except Exception:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def restore(args) -> int:
    from tqdm.auto import tqdm

    source = _source(args)
    show = args.progress if args.progress is not None else bool(sys.stderr is not None and sys.stderr.isatty())
    with output_stream(args.output) as out:
        restorer = load_restorer(args)
        options = chosen_task_options(args, restorer)
        with tqdm(total=source.count, unit="line", desc="punct-case", disable=not show, file=sys.stderr) as bar:
            for batch in _batches(source.lines(), args.batch_size * CALL_BATCHES):
                results = restorer(
                    batch, batch_size=args.batch_size, keep_punctuation=args.keep_punctuation,
                    ends_sentence=args.ends_sentence, progress=False, **options,
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


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """Usage errors exit through ``parser``; a window-size fault returns its exit code."""
    if args.text is not None and args.input:
        parser.error("give a TEXT argument or --input, not both")
    if args.batch_size < 1:
        parser.error("--batch-size must be ≥ 1")
    return check_windows(args)


def add_parser(commands) -> None:
    """Register ``restore`` with ``commands`` (the sub-parsers of ``hf-punctcase``)."""
    parser = commands.add_parser(
        "restore",
        help="restore punctuation and casing",
        description=(
            "Restore punctuation and casing. Reads TEXT, or --input (one transcript a line), or stdin; "
            "writes one line per input line. Input and output are UTF-8; lines end at \\n only."
        ),
    )
    parser.add_argument("text", nargs="?", help="a transcript; omit to read --input or stdin")
    parser.add_argument("-i", "--input", help="file with one transcript a line ('-' for stdin; default: stdin)")
    parser.add_argument(
        "-o", "--output",
        help="write here instead of stdout; replaced whole only on success, so it may be the input file",
    )
    add_model_arguments(parser)
    parser.add_argument(
        "--errors", choices=("strict", "replace"), default="strict",
        help="input that is not UTF-8: strict stops with the line number, replace writes U+FFFD for each "
        "undecodable byte (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON result a line, with per-word labels and scores")
    parser.add_argument(
        "--keep-punctuation", action="store_true", help="keep marks already in the input instead of predicting them"
    )
    parser.add_argument(
        "--ends-sentence", action=argparse.BooleanOptionalAction, default=True,
        help="each line ends a sentence: its last word gets the likeliest sentence end where the model gives it "
        "none (default); --no-ends-sentence for lines that may stop mid-sentence",
    )
    add_task_option_arguments(parser)
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="a progress bar over lines on stderr (default: when stderr is a terminal)",
    )
    parser.set_defaults(handler=restore, check=check)

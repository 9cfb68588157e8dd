"""``hf-punctcase subtitles``: one JSON file of timed words (Whisper's, with word timestamps; or a list
of ``{"word", "start", "end"}``), restored and written as SRT or WebVTT cues
(:mod:`hf_punctcase.subtitles`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .common import (
    Fault, add_model_arguments, add_task_option_arguments, check_windows, chosen_task_options, load_restorer, output_stream,
)


def _read_json(path: str):
    """The parsed JSON of ``path`` ('-': stdin); a fault names the path (and the position of a syntax
    error, :func:`~hf_punctcase.subtitles.parse_json`)."""
    from ..subtitles import parse_json

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
    try:
        return parse_json(raw, name)
    except ValueError as error:
        raise Fault(error) from None


def subtitles(args) -> int:
    from ..subtitles import check_writers, restore_cues, whisper_words, write

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
    with output_stream(args.output) as out:
        restorer = load_restorer(args)
        _, cues = restore_cues(
            restorer, words, keep_punctuation=args.keep_punctuation, max_chars=args.max_chars,
            max_seconds=args.max_seconds, pause=args.pause, batch_size=args.batch_size,
            **chosen_task_options(args, restorer),
        )
        out.write(write(cues, fmt))
        out.flush()
    return 0


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """Usage errors exit through ``parser``; a window-size fault returns its exit code."""
    if args.batch_size < 1:
        parser.error("--batch-size must be ≥ 1")
    if args.max_chars < 1:
        parser.error("--max-chars must be ≥ 1")
    if not args.max_seconds > 0:
        parser.error("--max-seconds must be > 0")
    if not args.pause >= 0:
        parser.error("--pause must be ≥ 0")
    return check_windows(args)


def add_parser(commands) -> None:
    """Register ``subtitles`` with ``commands`` (the sub-parsers of ``hf-punctcase``)."""
    parser = commands.add_parser(
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
    parser.add_argument("input", help="JSON file of timed words ('-' for stdin)")
    parser.add_argument(
        "-o", "--output", help="write here instead of stdout; replaced whole only on success"
    )
    parser.add_argument(
        "-f", "--format", choices=("srt", "vtt"),
        help="subtitle format (default: the output's extension, .srt or .vtt, else srt)",
    )
    parser.add_argument("--max-chars", type=int, default=42, help="characters per cue (default: %(default)s)")
    parser.add_argument(
        "--max-seconds", type=float, default=6.0, help="seconds per cue (default: %(default)s)"
    )
    parser.add_argument(
        "--pause", type=float, default=0.8,
        help="a gap between words of at least this many seconds is a place to cut a cue too long (default: %(default)s)",
    )
    parser.add_argument(
        "--keep-punctuation", action="store_true",
        help="keep Whisper's words as written and its marks (default: restore them from scratch)",
    )
    add_task_option_arguments(parser)
    add_model_arguments(parser)
    parser.set_defaults(handler=subtitles, check=check)

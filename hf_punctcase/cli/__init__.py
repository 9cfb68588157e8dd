"""Command line: ``hf-punctcase restore``, ``subtitles``, ``stats``, ``push``, ``card``, ``quantize``,
``export-onnx`` and ``demo``.

``restore`` reads a TEXT argument, ``--input FILE`` or stdin, one transcript a line, and writes one
line per input line. Text in and out is UTF-8 (a byte-order mark at the start of the input is
dropped). Lines are split on ``\\n`` only, for files and stdin alike: any other line or paragraph
separator (``\\r``, U+2028, ...) inside a line is whitespace between words. Input that is not valid
UTF-8 stops the run with the line number (``--errors strict``, the default) or has each undecodable
byte replaced by U+FFFD (``--errors replace``); a line with NUL bytes is binary data and always stops
the run.

An ``--output`` file is written through a temporary file in its folder and renamed into place only
after every line was restored, so it may be the input file itself, and a failure leaves it as it was.
Through a symbolic link the file it points to is replaced, never the link (a loop of links is a
fault); a FIFO or a device (``-o /dev/null``, a named pipe) is written into. Every command that
writes a file does so.
Everything that can be checked before the model runs is checked first: the input is readable (a
regular file is read through once for its encoding and its line count), the output's folder is
writable and the checkpoint is whole (:func:`hf_punctcase.checkpoints.resolve`). A fault ends
the run with one line on stderr naming the path and what is wrong, and exit code 2, and so does a
fault in writing the output (a full disk, a file size limit). On stdout, lines restored before a fault
found later in streamed input (stdin, a pipe) have already been written. Ctrl-C (exit code 130) and
SIGTERM (143) end the run with one line too, the output file as it was.

With ``--spoken-punctuation`` (a dictated "new line", "new paragraph") or ``--paragraphs`` a restored
transcript may hold line breaks, so that it spans several output lines; ``--json`` keeps one record a line.

Code from a model folder runs only with ``--trust-remote-code``; nothing ever prompts, and stdin is
read for transcripts only.

``subtitles`` reads one JSON file of timed words (Whisper's, with word timestamps; or a list of
``{"word", "start", "end"}``), restores it and writes SRT or WebVTT cues
(:mod:`hf_punctcase.subtitles`), with the same faults, output file handling and exit code.

Each command is a module of this package with an ``add_parser(commands)`` that registers its
sub-parser, its ``handler`` and, where options must be checked together, a ``check`` run before the
handler; :data:`COMMANDS` lists them in the order ``--help`` shows them. What they share (faults,
output files, the model options) is in :mod:`hf_punctcase.cli.common`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

from . import data, demo, export, hub, restore, subtitles
from .common import (
    DTYPE_CHOICES, EXIT_FAULT, Fault, add_model_arguments, flush_stdout, load_restorer, print_error, silence_stdout,
)

__all__ = ["COMMANDS", "DTYPE_CHOICES", "EXIT_FAULT", "Fault", "add_model_arguments", "build_parser", "load_restorer", "main"]

#: The command modules, each registering its sub-commands with ``add_parser(commands)``.
COMMANDS = (restore, subtitles, data, hub, export, demo)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hf-punctcase", description="Punctuation and truecasing for ASR transcripts.")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


class Terminated(BaseException):
    """SIGTERM (what ``timeout``, systemd and docker send), raised where the run is, as Ctrl-C raises
    KeyboardInterrupt, so that the output's temporary file is removed on the way out. A
    BaseException, so that no ``except Exception`` on the way swallows it."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


def _raise_again_if_terminated(unraisable) -> None:
    """``sys.unraisablehook`` while SIGTERM raises: a signal that arrives while a finalizer runs
    (``__del__``, a weakref callback) raises there, where Python prints the exception and goes on as
    if nothing happened. The signal is sent again a moment later from another thread, so that its
    handler runs once the finalizer has returned, where the exception ends the run (sent from here,
    the handler would run at once, inside this hook, and be dropped again)."""
    if isinstance(unraisable.exc_value, Terminated):
        resend = threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGTERM))
        resend.daemon = True
        resend.start()
    else:
        sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` (also one that lands in a finalizer);
    the previous handler and unraisable hook are put back after. Only the main thread can set
    handlers; elsewhere SIGTERM keeps its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous, previous_hook = signal.signal(signal.SIGTERM, _raise_terminated), sys.unraisablehook
    sys.unraisablehook = _raise_again_if_terminated
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.unraisablehook = previous_hook


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check = getattr(args, "check", None)
    if check is not None:
        code = check(parser, args)
        if code is not None:
            return code
    with _sigterm_raises():
        try:
            code = args.handler(args)
            flush_stdout()  # a full disk reported here, as one line, not by the interpreter's last flush
            return code
        except Fault as fault:
            return print_error(fault)
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly.
            silence_stdout()
            return 141
        except KeyboardInterrupt:
            print("hf-punctcase: interrupted", file=sys.stderr)
            return 130
        except Terminated:
            print("hf-punctcase: terminated (SIGTERM)", file=sys.stderr)
            return 143

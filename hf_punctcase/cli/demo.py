"""``hf-punctcase demo``: the Gradio app of :mod:`hf_punctcase.demo` served, or written out as the
files of a Hugging Face Space (``--space-dir``)."""

from __future__ import annotations

import os

from .common import checkpoint_folder, print_error, print_result


def demo(args) -> int:
    try:
        from .. import demo as app
    except ImportError as error:  # pragma: no cover - the message names the extra
        return print_error(f"the demo needs gradio: pip install 'hf-punctcase[demo]' ({error})")
    if args.space_dir:
        if os.path.lexists(args.space_dir) and not args.overwrite:
            return print_error(f"output {args.space_dir} exists; pass --overwrite to replace it")
        try:
            target = app.write_space(args.space_dir, overwrite=args.overwrite)
        except OSError as error:
            return print_error(error)
        print_result(f"wrote {target}: README.md, app.py, requirements.txt (upload it as a Gradio Space)")
        return 0
    if args.model is not None and args.model not in app.MODELS.values():
        try:
            checkpoint_folder(args.model)
        except (OSError, ValueError) as error:
            return print_error(error)
    app.launch(args.model, host=args.host, port=args.port, share=args.share == "on")
    return 0


def add_parser(commands) -> None:
    """Register ``demo`` with ``commands`` (the sub-parsers of ``hf-punctcase``)."""
    parser = commands.add_parser(
        "demo",
        help="try the models in a browser (a Gradio app; the [demo] extra)",
        description=(
            "Serve a Gradio app: a transcript box with the restored text, low-confidence words highlighted, "
            "switches for disfluency removal, punctuation or casing only and the model, and Whisper JSON to "
            "SRT/WebVTT. Its API endpoint 'restore' takes the transcript and returns the restored text. "
            "--space-dir writes the files of a Hugging Face Space serving the same app instead."
        ),
    )
    parser.add_argument(
        "--model", default=None,
        help="a checkpoint folder or embedded name to offer first (default: the default, then the on-device model)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or the next free one)")
    parser.add_argument(
        "--share", choices=("off", "on"), default="off",
        help="on: ask Gradio for a public share link (needs internet; default: %(default)s)",
    )
    parser.add_argument("--space-dir", metavar="DIR", help="write a Space's README.md, app.py and requirements.txt to DIR and exit")
    parser.add_argument("--overwrite", action="store_true", help="with --space-dir: replace DIR if it exists")
    parser.set_defaults(handler=demo)

"""Command line: ``hf-punctcase restore``, ``stats``, ``push`` and ``card``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator


def _error(message) -> int:
    print(f"hf-punctcase: error: {message}", file=sys.stderr)
    return 2


def _transcripts(args) -> Iterator[str]:
    if args.text is not None:
        yield args.text
        return
    handle = open(args.input, encoding="utf-8") if args.input and args.input != "-" else sys.stdin
    try:
        for line in handle:
            yield line.rstrip("\n")
    finally:
        if handle is not sys.stdin:
            handle.close()


def _batches(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size * 8:  # a few batches of transcripts per pipeline call keeps memory flat
            yield batch
            batch = []
    if batch:
        yield batch


def restore(args) -> int:
    from . import load_pipeline

    try:
        restorer = load_pipeline(args.model)
    except (FileNotFoundError, OSError, ValueError) as error:
        return _error(error)
    out = open(args.output, "w", encoding="utf-8") if args.output and args.output != "-" else sys.stdout
    try:
        for batch in _batches(_transcripts(args), args.batch_size):
            results = restorer(batch, batch_size=args.batch_size, keep_punctuation=args.keep_punctuation)
            for result in results:
                if args.json:
                    out.write(json.dumps(result, ensure_ascii=False) + "\n")
                else:
                    out.write(result["text"] + "\n")
            out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


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


def _checkpoint_folder(path: str):
    from pathlib import Path

    from .registry import DEFAULT_MODEL_DIR, check_model_dir

    return Path(check_model_dir(Path(DEFAULT_MODEL_DIR if path == "default" else path).expanduser()))


def push(args) -> int:
    from .hub import push_to_hub

    try:
        folder = _checkpoint_folder(args.path)
        card = open(args.card, encoding="utf-8").read() if args.card else None
        info = push_to_hub(
            folder, args.repo_id, card=card, revision=args.revision, private=args.private or None,
            commit_message=args.message, create_pr=args.create_pr,
        )
    except (FileNotFoundError, OSError, ValueError) as error:
        return _error(error)
    print(f"pushed {folder} to {args.repo_id}: commit {info.oid} ({info.commit_url})")
    return 0


def card(args) -> int:
    from .model_card import card_for_checkpoint

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
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"wrote {target}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hf-punctcase", description="Punctuation and truecasing for ASR transcripts.")
    commands = parser.add_subparsers(dest="command", required=True)
    restore_parser = commands.add_parser(
        "restore",
        help="restore punctuation and casing",
        description="Restore punctuation and casing. Reads TEXT, or --input (one transcript a line), or stdin.",
    )
    restore_parser.add_argument("text", nargs="?", help="a transcript; omit to read --input or stdin")
    restore_parser.add_argument("-i", "--input", help="file with one transcript a line ('-' for stdin)")
    restore_parser.add_argument("-o", "--output", help="write here instead of stdout")
    restore_parser.add_argument("-m", "--model", help="checkpoint folder or Hub repo id (default: embedded model)")
    restore_parser.add_argument("-b", "--batch-size", type=int, default=16, help="windows per forward pass")
    restore_parser.add_argument("--json", action="store_true", help="one JSON result a line, with per-word labels and scores")
    restore_parser.add_argument(
        "--keep-punctuation", action="store_true", help="keep marks already in the input instead of predicting them"
    )
    restore_parser.set_defaults(handler=restore)
    stats_parser = commands.add_parser(
        "stats", help="words and label counts per corpus and split", description="Words and label counts per corpus and split."
    )
    stats_parser.add_argument("corpus", nargs="*", help="corpora (default: every corpus in the data folder)")
    stats_parser.add_argument("--data-dir", help="corpus folder (default ../shared/data)")
    stats_parser.add_argument("--max-words", type=int, default=200, help="words per example")
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
    push_parser.add_argument("--message", default="Upload punct-case model", help="commit message")
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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "restore" and args.text is not None and args.input:
        parser.error("give a TEXT argument or --input, not both")
    if args.command == "restore" and args.batch_size < 1:
        parser.error("--batch-size must be ≥ 1")
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

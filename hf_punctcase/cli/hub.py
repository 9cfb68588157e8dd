"""``hf-punctcase push``: a checkpoint uploaded to the Hugging Face Hub in one commit
(:func:`hf_punctcase.hub.push_to_hub`)."""

from __future__ import annotations

from pathlib import Path

from .common import checkpoint_folder, print_error, print_result


def push(args) -> int:
    from ..hub import push_to_hub

    try:
        folder = checkpoint_folder(args.path)
        card = Path(args.card).read_text(encoding="utf-8") if args.card else None
        info = push_to_hub(
            folder, args.repo_id, card=card, revision=args.revision, private=args.private or None,
            commit_message=args.message, create_pr=args.create_pr,
        )
    except (FileNotFoundError, OSError, ValueError) as error:
        return print_error(error)
    print_result(f"pushed {folder} to {args.repo_id}: commit {info.oid} ({info.commit_url})")
    return 0


def add_parser(commands) -> None:
    """Register ``push`` with ``commands`` (the sub-parsers of ``hf-punctcase``)."""
    parser = commands.add_parser(
        "push",
        help="upload a checkpoint to the Hugging Face Hub",
        description="Upload a checkpoint (weights, config, code for trust_remote_code, tokenizer, card) in one commit.",
    )
    parser.add_argument("path", help="checkpoint folder, or 'default' for the embedded model")
    parser.add_argument("repo_id", help="org/name on the Hub (created if missing)")
    parser.add_argument("--revision", help="branch to commit to (default main)")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--card", help="a README.md to use instead of the checkpoint's own or a generated one")
    parser.add_argument("--message", default="Upload punct-case model", help="commit message (default: %(default)s)")
    parser.add_argument("--create-pr", action="store_true", help="open a pull request instead of committing")
    parser.set_defaults(handler=push)

"""``hf-punctcase stats``: words and label counts per corpus and split of the training data."""

from __future__ import annotations

from .common import print_error, print_result


def stats(args) -> int:
    from ..data import FILE_SOURCES, SOURCES, load_punct_case_dataset
    from ..data.stats import split_stats, stats_table

    names = args.corpus or [name for name in SOURCES if name not in FILE_SOURCES]
    unknown = sorted(set(names) - set(SOURCES))
    if unknown:
        return print_error(f"unknown corpora {unknown}; known: {sorted(SOURCES)}")
    rows = []
    for name in names:
        try:
            corpus = load_punct_case_dataset(name, args.data_dir, max_words=args.max_words)
        except FileNotFoundError as error:
            return print_error(error)
        rows += [(name, split, split_stats(corpus[split])) for split in corpus]
    print_result(stats_table(rows))
    return 0


def add_parser(commands) -> None:
    """Register ``stats`` with ``commands`` (the sub-parsers of ``hf-punctcase``)."""
    parser = commands.add_parser(
        "stats", help="words and label counts per corpus and split", description="Words and label counts per corpus and split."
    )
    parser.add_argument("corpus", nargs="*", help="corpora (default: every corpus in the data folder)")
    parser.add_argument("--data-dir", help="corpus folder (default ../shared/data)")
    parser.add_argument("--max-words", type=int, default=200, help="words per example (default: %(default)s)")
    parser.set_defaults(handler=stats)

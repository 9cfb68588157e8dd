#!/usr/bin/env python
"""Restore a corpus of transcripts of any size, streamed, resumable, on 🤗 datasets or Ray Data.

    python recipes/restore_corpus.py --input 'shards/*.jsonl' --text_field text --output restored.jsonl
    python recipes/restore_corpus.py --engine datasets --num_proc 4 --input calls.txt --output calls.parquet
    python recipes/restore_corpus.py --engine ray --num_proc 8 --num_gpus 1 --input 'part-*.parquet' --output out.jsonl

Input: ``.txt`` (one transcript a line, read as the field ``text``), ``.jsonl`` or ``.parquet``
(``--text_field``), several files or globs in the order given (a glob's files sorted), streamed record by
record as a ``datasets.IterableDataset`` (:func:`hf_punctcase.corpus_files.record_stream`) so that memory
stays flat whatever their size. A bad record (a line that is not JSON or not UTF-8, a record without the
text field, a file that cannot be read) ends the run with one line naming its file and line, the blocks
already written kept; ``--skip_bad_records`` leaves such records out and lists them in
``OUTPUT.skipped.jsonl``. Output:
``OUTPUT.jsonl`` or ``OUTPUT.parquet``, every input record once, in input order, its fields kept and the
restored text added as ``restored`` (``--output_field``), and each word's labels and scores where
``--words_field`` names a field for them.

Engines: ``datasets`` restores the stream in this process (``--num_proc N``: each block of records goes
through ``Dataset.map`` on N worker processes); ``ray`` streams the input through Ray Data
(``map_batches`` over ``--num_proc`` actors, each loading the model once for the run; ``--num_gpus``
per actor), on a local cluster or the one ``RAY_ADDRESS`` names.

Resumable: the output is written in blocks of ``--block_size`` records, each whole or not at all, into
the folder OUTPUT.blocks beside it, and joined into OUTPUT at the end; a rerun with the same arguments
after a crash skips the blocks already written.

Provenance: ``OUTPUT.provenance.json`` beside the output names the model and lists the data it was
trained on; a checkpoint trained on the restored text (``text:OUTPUT``, ``ted_captions_labelled:OUTPUT``)
lists them in its card, since the labels it learnt are that model's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from tqdm.auto import tqdm

import hf_punctcase
from hf_punctcase.atomic_files import atomic_output, atomic_write_text
from hf_punctcase.cards.lineage import write_provenance
from hf_punctcase.corpus_files import BadInput, BadRecord, input_files, record_stream
from hf_punctcase.faults import one_line

OUTPUT_SUFFIXES = (".jsonl", ".parquet")
BLOCK_NAME = "block-{:06d}.jsonl"
#: Batches per Arrow block the Ray engine reads from the stream: blocks small enough to keep
#: every actor busy, large enough that Ray's cost per block stays small.
RAY_BLOCK_BATCHES = 4


def plain(value):
    """A record's value as JSON writes it (Ray Data hands back NumPy scalars and arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def batches(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def restored_by_datasets(stream, args) -> Iterator[dict]:
    options = restorer_options(args)
    if not args.num_proc or args.num_proc == 1:
        yield from hf_punctcase.restore_dataset(stream, **options)
        return
    import datasets

    for block in batches(stream, args.block_size):
        yield from hf_punctcase.restore_dataset(datasets.Dataset.from_list(block), num_proc=args.num_proc, **options)


def restored_by_ray(stream, args) -> Iterator[dict]:
    import ray

    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # the output keeps the input's order
    context.enable_progress_bars = False
    options = restorer_options(args)
    # One Ray Dataset for the whole stream: --num_proc actors load the model once each for the run.
    restored = ray_dataset_of(stream, rows_per_block=RAY_BLOCK_BATCHES * args.batch_size).map_batches(
        hf_punctcase.Restorer,
        fn_constructor_kwargs=options,
        batch_size=args.batch_size,
        concurrency=args.num_proc or 1,
        num_gpus=args.num_gpus,
        batch_format="numpy",
    )
    for row in restored.iter_rows():
        yield plain(row)


def ray_dataset_of(stream, rows_per_block: int):
    """A 🤗 ``IterableDataset`` as a Ray Dataset: one read task iterates it in order, lazily, in Arrow
    blocks of ``rows_per_block`` rows, and Ray's streaming executor applies its back-pressure. (Ray
    2.40's ``from_huggingface`` predates datasets 5 and looks a dataset up on the Hub first.) The task
    runs on a Ray worker: on a multi-node cluster the input files must be where every node reads them."""
    from ray.data import Datasource, read_datasource
    from ray.data.block import BlockMetadata
    from ray.data.datasource import ReadTask

    class IterableDatasetSource(Datasource):
        def estimate_inmemory_data_size(self) -> None:
            return None

        def get_read_tasks(self, parallelism: int) -> list:
            def read():
                yield from stream.with_format("arrow").iter(batch_size=rows_per_block)

            unknown = BlockMetadata(num_rows=None, size_bytes=None, schema=None, input_files=None, exec_stats=None)
            return [ReadTask(read, unknown)]

    # Reading asks for no CPU of its own: actors that hold every CPU of the cluster must not starve it.
    return read_datasource(IterableDatasetSource(), ray_remote_args={"num_cpus": 0})


def restorer_options(args) -> dict:
    options = {
        "model": args.model, "column": args.text_field, "output_column": args.output_field,
        "words_column": args.words_field, "batch_size": args.batch_size,
    }
    if args.remove_disfluencies:
        options["remove_disfluencies"] = True
    # A Ray actor given GPUs sees them as its devices 0, 1, ...: it runs on the first unless told.
    device = args.device or ("cuda" if args.engine == "ray" and args.num_gpus > 0 else None)
    if device is not None:
        options["load_options"] = {"device": device}
    return options


def run_signature(files: list[str], args) -> dict:
    """What a rerun must share with the run it resumes: the inputs (and their sizes and times) and
    every argument that changes the output."""
    return {
        "inputs": [[os.path.abspath(name), os.path.getsize(name), os.stat(name).st_mtime_ns] for name in files],
        "model": args.model,
        "text_field": args.text_field,
        "output_field": args.output_field,
        "words_field": args.words_field,
        "remove_disfluencies": args.remove_disfluencies,
        "device": args.device,
        "block_size": args.block_size,
        "output": args.output.suffix,
    }


def finished_blocks(folder: Path) -> list[Path]:
    """The blocks written so far, numbered from 0 without a gap; a temporary file a crash left is removed."""
    for leftover in folder.glob(".*.tmp"):
        leftover.unlink()
    blocks = []
    while (folder / BLOCK_NAME.format(len(blocks))).exists():
        blocks.append(folder / BLOCK_NAME.format(len(blocks)))
    return blocks


def records_in(block: Path) -> int:
    with open(block, encoding="utf-8") as handle:
        return sum(1 for _ in handle)


def start_or_resume(folder: Path, signature: dict) -> list[Path]:
    manifest = folder / "run.json"
    if manifest.exists():
        if json.loads(manifest.read_text(encoding="utf-8")) != signature:
            raise BadInput(f"{folder}: the blocks there are of another run (other inputs or arguments); remove the folder to start over")
        return finished_blocks(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(manifest, json.dumps(signature, indent=1) + "\n")
    return []


def join_blocks(blocks: list[Path], output: Path) -> None:
    """OUTPUT from the blocks in order, whole or not at all."""
    if output.suffix == ".jsonl":
        with atomic_output(output) as handle:
            for block in blocks:
                with open(block, encoding="utf-8") as part:
                    shutil.copyfileobj(part, handle)
        return
    import datasets

    with atomic_output(output, binary=True) as handle:
        # Arrow files on disk, written to Parquet a batch at a time: memory stays flat.
        datasets.Dataset.from_json([str(block) for block in blocks], keep_in_memory=False).to_parquet(handle)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", nargs="+", required=True, help="Files or globs: .txt, .jsonl or .parquet.")
    parser.add_argument("--output", type=Path, required=True, help="OUTPUT.jsonl or OUTPUT.parquet")
    parser.add_argument("--engine", choices=("datasets", "ray"), default="datasets")
    parser.add_argument("--model", default=None, help="Checkpoint folder, Hub repo id, 'default' (the default), 'accurate' or 'on-device'.")
    parser.add_argument("--text_field", default="text")
    parser.add_argument("--output_field", default="restored")
    parser.add_argument("--words_field", default=None, help="Also keep each word's labels and scores in this field.")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--num_proc", type=int, default=None, help="Worker processes (datasets) or actors (ray).")
    parser.add_argument("--num_gpus", type=float, default=0, help="GPUs per Ray actor (they run on cuda unless --device).")
    parser.add_argument("--device", default=None, help="Device the model runs on, e.g. cuda:0 (default: the CPU).")
    parser.add_argument("--block_size", type=int, default=10_000, help="Records per resumable block of output.")
    parser.add_argument("--remove_disfluencies", action="store_true", help="The fluent text (models with a disfluency head).")
    parser.add_argument(
        "--skip_bad_records", action="store_true",
        help="Leave out a record that cannot be restored (a line that is not JSON or not UTF-8, no text field, a "
        "file that cannot be read) and go on; their files and numbers go to OUTPUT.skipped.jsonl. Without: the "
        "first ends the run with one line naming it, the blocks already written kept.",
    )
    args = parser.parse_args(argv)
    if args.output.suffix not in OUTPUT_SUFFIXES:
        parser.error(f"--output {args.output}: must end in {' or '.join(OUTPUT_SUFFIXES)}")
    for name in ("batch_size", "block_size", "num_proc"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1, not {value}")
    return args


def skipped_file_of(output: Path) -> Path:
    return output.with_name(output.name + ".skipped.jsonl")


def main(argv: list[str] | None = None) -> Path:
    from transformers.utils import logging as transformers_logging

    args = parse_args(argv)
    transformers_logging.disable_progress_bar()  # the run's own bar counts records; loading bars would be noise
    try:
        files = input_files(args.input)
    except BadInput as error:
        raise BadInput(f"--input {error}") from None
    folder = args.output.with_name(args.output.name + ".blocks")
    blocks = start_or_resume(folder, run_signature(files, args))
    done = sum(records_in(block) for block in blocks)
    if blocks:
        print(f"resuming after {len(blocks)} blocks ({done} records) in {folder}", file=sys.stderr)
    skipped = skipped_file_of(args.output)
    # The stream is read from its start on every run (the records done are skipped), so the bad records
    # before them are found again.
    skipped.unlink(missing_ok=True)
    stream = record_stream(files, args.text_field, str(skipped) if args.skip_bad_records else None).skip(done)
    restored = (restored_by_ray if args.engine == "ray" else restored_by_datasets)(stream, args)
    # A bar on a terminal only, cleared at the end: the run's last lines on stderr are its result or its one error.
    with tqdm(initial=done, unit="record", desc="restore_corpus", dynamic_ncols=True, disable=None, leave=False) as bar:
        for block in batches(restored, args.block_size):
            path = folder / BLOCK_NAME.format(len(blocks))
            with atomic_output(path) as handle:
                handle.writelines(json.dumps(plain(record), ensure_ascii=False) + "\n" for record in block)
            blocks.append(path)
            done += len(block)
            bar.update(len(block))
    write_provenance(args.output, args.model, text_field=args.text_field, output_field=args.output_field,
                     remove_disfluencies=args.remove_disfluencies)
    join_blocks(blocks, args.output)
    shutil.rmtree(folder)
    print(f"restore_corpus: {done} records restored into {args.output}", file=sys.stderr)
    report_skipped(skipped)
    return args.output


def report_skipped(skipped: Path) -> None:
    """Say how many records were left out; their list is kept once each (a read retried by Ray may
    have found one twice), or removed when there are none."""
    if not skipped.exists():
        return
    faults = list(dict.fromkeys(skipped.read_text(encoding="utf-8").splitlines()))
    atomic_write_text(skipped, "".join(line + "\n" for line in faults))
    print(f"restore_corpus: skipped {len(faults)} bad records (listed in {skipped})", file=sys.stderr)


def bad_record_in(error: BaseException) -> BadRecord | None:
    """The BadRecord an error is or carries (Ray hands back a reader's error wrapped in its own)."""
    while error is not None:
        if isinstance(error, BadRecord) and type(error) is BadRecord:
            return error
        error = getattr(error, "cause", None) or error.__cause__
    return None


def cli(argv: list[str] | None = None) -> int:
    """:func:`main` as a command: a fault of the input is one line on stderr and exit status 2."""
    try:
        main(argv)
    except BadInput as error:
        print(f"restore_corpus: error: {one_line(error)}", file=sys.stderr)
        return 2
    except Exception as error:
        bad = bad_record_in(error)
        if bad is None:
            raise
        print(f"restore_corpus: error: {one_line(bad)} (--skip_bad_records leaves such records out)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(cli())

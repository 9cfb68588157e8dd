"""Transcript files read record by record, for restoring a corpus: ``.txt`` (one transcript a line, as
the field ``text``), JSON Lines (``.jsonl``, ``.json``: one object a line) and Parquet.

Every fault is named by its file and record: a line that is not JSON or not an object, a record without
the text field or whose text is not a string, a line that is not UTF-8, a file that cannot be read or
holds no record. :func:`read_records` raises :class:`BadRecord` at the first, or hands each to
``on_bad`` and goes on (``--skip_bad_records``), so that one bad line in a million-record archive costs
that line, not the run.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

#: The suffixes read, and how.
TEXT_SUFFIXES = (".txt",)
JSON_LINES_SUFFIXES = (".jsonl", ".json")
PARQUET_SUFFIXES = (".parquet",)
SUFFIXES = TEXT_SUFFIXES + JSON_LINES_SUFFIXES + PARQUET_SUFFIXES
#: Records read from a Parquet file at a time.
PARQUET_BATCH_ROWS = 1024


class BadInput(ValueError):
    """An input that names no readable file of a kind read here (a glob matching nothing, a folder, a
    mix of kinds)."""


class BadRecord(ValueError):
    """A record (or a whole file, ``record`` None) that cannot be restored.

    Attributes:
        file: the file, as given.
        record: the record's line number in a text or JSON Lines file, its row number in a Parquet
            file (both from 1); None for a fault of the whole file.
        reason: what is wrong, in a few words.
    """

    def __init__(self, file: str, record: int | None, reason: str):
        self.file, self.record, self.reason = str(file), record, reason
        where = self.file if record is None else f"{self.file}, {'row' if _is_parquet(self.file) else 'line'} {record}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):  # an error raised in another process (a Ray task) comes back whole
        return (type(self), (self.file, self.record, self.reason))

    def as_record(self) -> dict[str, Any]:
        """The fault as a JSON object: ``{"file", "record", "reason"}``."""
        return {"file": self.file, "record": self.record, "reason": self.reason}


def input_files(patterns: Sequence[str]) -> list[str]:
    """The files the paths and globs name, in the order given (a glob's files sorted), all of one kind."""
    files = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not matches:
            raise BadInput(f"{pattern}: no file matches")
        for match in matches:
            if not Path(match).is_file():
                raise BadInput(f"{match}: no such file")
            files.append(match)
    kinds = {_kind(name) for name in files}
    if len(kinds) != 1 or None in kinds:
        suffixes = sorted({Path(name).suffix.lower() or "no suffix" for name in files})
        raise BadInput(f"the input files must all be one of {', '.join(SUFFIXES)}; got {', '.join(suffixes)}")
    return files


def read_records(
    files: Sequence[str], text_field: str = "text", on_bad: Callable[[BadRecord], None] | None = None
) -> Iterator[dict[str, Any]]:
    """The records of ``files`` in order, each checked: a dict whose ``text_field`` holds a string.

    A bad record raises :class:`BadRecord`, or with ``on_bad`` is handed to it and left out (a file
    that cannot be read or holds no record is one bad record with ``record`` None; the rest of such a
    file is left out with it)."""
    for file in files:
        count = 0
        try:
            for number, record in _records_of(file):
                count += 1
                fault = record if isinstance(record, BadRecord) else _fault_of(file, number, record, text_field)
                if fault is None:
                    yield record
                elif on_bad is None:
                    raise fault
                else:
                    on_bad(fault)
            if count == 0:
                raise BadRecord(file, None, "holds no record")
        except BadRecord as bad:
            if on_bad is None or bad.record is not None:
                raise
            on_bad(bad)


def _fault_of(file: str, number: int, record: Any, text_field: str) -> BadRecord | None:
    if not isinstance(record, dict):
        return BadRecord(file, number, f"a JSON {type(record).__name__}, not an object")
    if text_field not in record:
        return BadRecord(file, number, f"no field {text_field!r} (its fields: {', '.join(record) or 'none'})")
    if not isinstance(record[text_field], str):
        value = "null" if record[text_field] is None else type(record[text_field]).__name__
        return BadRecord(file, number, f"the field {text_field!r} holds {value}, not text")
    return None


def _records_of(file: str) -> Iterator[tuple[int, Any]]:
    """(number, parsed record) of one file, a :class:`BadRecord` in place of a record that does not
    parse; raises :class:`BadRecord` for a file that cannot be read."""
    kind = _kind(file)
    if kind == "parquet":
        yield from _parquet_records(file)
        return
    try:
        handle = open(file, "rb")
    except OSError as error:
        raise BadRecord(file, None, f"cannot be read ({error.strerror or error})") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                yield number, BadRecord(file, number, f"not UTF-8 (byte {error.start + 1} of the line)")
                continue
            line = line.removesuffix("\n").removesuffix("\r")
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark is not part of the first record
            if kind == "text":
                yield number, {"text": line}
            elif line.strip():  # JSON Lines allows blank lines
                try:
                    yield number, json.loads(line)
                except ValueError as error:
                    yield number, BadRecord(file, number, f"not JSON ({error})")


def record_stream(files: Sequence[str], text_field: str = "text", skipped_file: str | None = None):
    """The records of ``files`` (:func:`read_records`) as a ``datasets.IterableDataset``, read lazily in
    file order. With ``skipped_file`` a bad record is left out and appended to that file as a JSON line
    (:meth:`BadRecord.as_record`), from whichever process reads the stream; else it raises."""
    import datasets

    return datasets.IterableDataset.from_generator(
        _generate, gen_kwargs={"files": tuple(files), "text_field": text_field, "skipped_file": skipped_file}
    )


def _generate(files: tuple[str, ...], text_field: str, skipped_file: str | None) -> Iterator[dict[str, Any]]:
    on_bad = None if skipped_file is None else lambda bad: _append_line(skipped_file, bad.as_record())
    yield from read_records(files, text_field, on_bad)


def _append_line(path: str, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _parquet_records(file: str) -> Iterator[tuple[int, Any]]:
    import pyarrow
    import pyarrow.parquet

    try:
        batches = pyarrow.parquet.ParquetFile(file).iter_batches(batch_size=PARQUET_BATCH_ROWS)
        number = 0
        for batch in batches:
            for record in batch.to_pylist():
                number += 1
                yield number, record
    except (OSError, pyarrow.ArrowException) as error:
        raise BadRecord(file, None, f"cannot be read as Parquet ({' '.join(str(error).split())})") from None


def _kind(file: str) -> str | None:
    suffix = Path(file).suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix in JSON_LINES_SUFFIXES:
        return "json"
    return "parquet" if suffix in PARQUET_SUFFIXES else None


def _is_parquet(file: str) -> bool:
    return _kind(file) == "parquet"


__all__ = ["BadInput", "BadRecord", "SUFFIXES", "input_files", "read_records", "record_stream"]

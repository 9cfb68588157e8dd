"""Files and folders written whole or not at all: through a temporary file (or folder) beside the
target, renamed into place only after everything was written (a rename within one file system is
atomic)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, encoding: str = "utf-8", newline: str | None = None) -> Iterator[IO[str]]:
    """Open a text stream whose content replaces ``path`` when the block ends without an exception;
    on an exception ``path`` is left as it was and the temporary file is removed. The new file keeps
    the permissions of the one it replaces."""
    target = Path(path)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding=encoding, newline=newline, dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            os.chmod(handle.name, target.stat().st_mode & 0o7777)
        else:
            os.chmod(handle.name, 0o666 & ~_umask())
        os.replace(handle.name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        raise


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` whole or not at all."""
    with atomic_output(path, encoding=encoding) as handle:
        handle.write(text)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder beside ``path``; when the block ends without an exception its
    files are flushed to disk and it is renamed to ``path``. On an exception it is removed and
    ``path`` is left as it was.

    An existing ``path`` raises ``FileExistsError`` before anything is written, unless ``overwrite``:
    then it is moved aside, replaced by the finished folder and deleted only once that rename
    succeeded (put back if it failed). A file (not a folder) at ``path`` is never replaced."""
    target = Path(path).expanduser()
    if target.exists() or target.is_symlink():
        if not overwrite:
            raise FileExistsError(f"output {target} exists; pass overwrite=True to replace it")
        if not target.is_dir() or target.is_symlink():
            raise FileExistsError(f"output {target} exists and is not a folder; it was left as it was")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield staging
        _flush_folder(staging)
        _move_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _flush_folder(folder: Path) -> None:
    """Flush every file to disk and give the folder and its files the permissions new ones get
    (mkdtemp makes the folder private)."""
    mask = _umask()
    for file in folder.rglob("*"):
        if file.is_file():
            os.chmod(file, 0o666 & ~mask)
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
    os.chmod(folder, 0o777 & ~mask)


def _move_into_place(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is moved aside first and deleted only
    after the rename succeeded, else put back."""
    if not (target.exists() or target.is_symlink()):
        os.rename(staging, target)
        return
    aside_folder = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
    aside = aside_folder / target.name
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        shutil.rmtree(aside_folder, ignore_errors=True)
        raise
    shutil.rmtree(aside_folder, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["atomic_directory", "atomic_output", "atomic_write_text"]

"""Files and folders written whole or not at all: through a temporary file (or folder) beside the
target, renamed into place only after everything was written (a rename within one file system is
atomic). A FIFO or a device, which no file can replace, is written into."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike, encoding: str = "utf-8", newline: str | None = None, *, binary: bool = False
) -> Iterator[IO]:
    """Open a text stream (a binary one with ``binary=True``) whose content replaces ``path`` when the
    block ends without an exception; on an exception ``path`` is left as it was and the temporary file
    is removed. The new file keeps the permissions of the one it replaces.

    Through a symbolic link the file it points to is replaced, never the link; a loop of links
    raises ``OSError`` (``ELOOP``), as a shell's ``> loop`` does. A FIFO or a device (a named pipe,
    ``/dev/null``) cannot be replaced by a file without losing what it is: it is written directly."""
    target = _output_target(path)
    mode, text_options = ("wb", {}) if binary else ("w", {"encoding": encoding, "newline": newline})
    if _is_special_file(target):
        handle = open(target, mode, **text_options)
        try:
            yield handle
            handle.close()
        finally:
            _close_quietly(handle)
        return
    handle = tempfile.NamedTemporaryFile(
        mode, **text_options, dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    try:
        yield handle
        handle.flush()
        os.fsync(handle.fileno())
        handle.close()
        if target.exists():
            os.chmod(handle.name, target.stat().st_mode & 0o7777)
        else:
            os.chmod(handle.name, 0o666 & ~_umask())
        os.replace(handle.name, target)
    except BaseException:
        _close_quietly(handle)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        raise


def _output_target(path: str | os.PathLike) -> Path:
    """The file that writing ``path`` replaces or writes into: through symbolic links, the file they
    point to, which need not exist yet. A loop of links raises ``OSError`` (``ELOOP``)."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise
    return Path(os.path.realpath(path))


def _is_special_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a FIFO or a device, which output is written into rather than replacing it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _close_quietly(handle: IO) -> None:
    """Close ``handle`` after a fault: its unwritten buffer, which may fail again (a full disk), does
    not matter any more, and that second error must not hide the first."""
    with contextlib.suppress(OSError):
        handle.close()


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

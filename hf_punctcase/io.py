"""Files written whole or not at all: through a temporary file in the target's folder, renamed into
place only after everything was written (a rename within one file system is atomic)."""

from __future__ import annotations

import contextlib
import os
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["atomic_output", "atomic_write_text"]

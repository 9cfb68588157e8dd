"""Fault injection on the files the command line writes: a full device, a file size limit, SIGTERM
mid-run, a loop of symbolic links, and FIFOs and devices given as ``-o``.

Each fault must end the run with one line on stderr naming the output and the OS error, exit code 2
(143 for SIGTERM), every file as it was and no temporary file left. Commands run in processes forked
from one server that imported the package once (as in ``tests/test_faults.py``); a request may
send stdout to any path (``/dev/full``), set a file size limit, or make stdout line-buffered (as
``PYTHONUNBUFFERED`` does), and the server tells the pid of each command so that it can be sent
SIGTERM.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest
from forked_cli import cli  # noqa: F401 (a fixture: one command-line server for this module)
from test_faults import assert_fault, snapshot



@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "out.txt").write_text("precious\n")
    words = [{"word": "so", "start": 0.0, "end": 0.4}, {"word": "what", "start": 0.4, "end": 0.9}]
    (tmp_path / "words.json").write_text(json.dumps(words))
    return tmp_path


def make_device(folder: Path, name: str, major: int, minor: int) -> Path:
    """A character device in ``folder`` (``/dev/null`` is 1, 3; ``/dev/full`` 1, 7), so that a run that
    wrongly replaced it would replace this copy, never the machine's own."""
    path = folder / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("making a device needs privileges this test runs without")
    return path


def no_temporary_file(folder: Path) -> bool:
    return not [path for path in folder.iterdir() if path.name.endswith(".tmp")]


# ---- a full device --------------------------------------------------------------------------------

FULL_DEVICE = "/dev/full"


@pytest.mark.skipif(not os.path.exists(FULL_DEVICE), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["restore", "subtitles"])
def test_output_to_a_full_device(cli, workdir, tiny_model_dir, command):
    argv = ["restore", "-m", tiny_model_dir, "so what"]
    if command == "subtitles":
        argv = ["subtitles", "-m", tiny_model_dir, "words.json"]
    before = snapshot(workdir)
    result = cli(*argv, "-o", FULL_DEVICE, cwd=workdir)
    assert_fault(result, f"output {FULL_DEVICE} could not be written", os.strerror(errno.ENOSPC))
    assert snapshot(workdir) == before


def test_card_to_a_full_device(cli, workdir, tiny_model_dir):
    full = make_device(workdir, "full", 1, 7)
    result = cli("card", tiny_model_dir, "-o", "full", cwd=workdir)
    assert_fault(result, "output full could not be written", os.strerror(errno.ENOSPC))
    assert stat.S_ISCHR(os.stat(full).st_mode)


@pytest.mark.skipif(not os.path.exists(FULL_DEVICE), reason="needs /dev/full")
@pytest.mark.parametrize(
    "argv, line_buffered",
    [
        (["restore", "-m", "MODEL", "so what"], False),
        (["subtitles", "-m", "MODEL", "words.json"], False),
        (["card", "MODEL", "-o", "-"], False),
        # The line saying where the card went; line-buffered, it fails in the print itself.
        (["card", "MODEL", "-o", "card.md"], False),
        (["card", "MODEL", "-o", "card.md"], True),
    ],
)
def test_stdout_to_a_full_device(cli, workdir, tiny_model_dir, argv, line_buffered):
    argv = [tiny_model_dir if arg == "MODEL" else arg for arg in argv]
    result = cli(*argv, cwd=workdir, stdout=FULL_DEVICE, line_buffered=line_buffered)
    assert_fault(result, "stdout could not be written", os.strerror(errno.ENOSPC))


# ---- a file size limit (EFBIG, as a full disk) ----------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["restore", "-m", "MODEL", "-i", "long.txt", "-o", "out.txt"],
        ["restore", "-m", "MODEL", "-i", "long.txt", "-o", "new.txt"],
        ["card", "MODEL", "-o", "out.txt", "--force"],
    ],
)
def test_file_size_limit(cli, workdir, tiny_model_dir, argv):
    (workdir / "long.txt").write_text("so what are the risks\n" * 500)
    argv = [tiny_model_dir if arg == "MODEL" else arg for arg in argv]
    before = snapshot(workdir)
    result = cli(*argv, cwd=workdir, file_size_limit=1000)
    output = argv[argv.index("-o") + 1]
    assert_fault(result, f"output {output} could not be written", os.strerror(errno.EFBIG))
    assert snapshot(workdir) == before  # the old output kept, no new or temporary file
    assert ("it was left as it was" in result.stderr) == (output == "out.txt")


# ---- SIGTERM mid-run ------------------------------------------------------------------------------


def test_sigterm_removes_the_temporary_file(cli, workdir, tiny_model_dir):
    lines = ("so what are the risks i am not technical we think that this is a good idea " * 3 + "\n") * 20000
    pid = cli.start("restore", "-m", tiny_model_dir, "-o", "out.txt", cwd=workdir, stdin=lines.encode())
    deadline = time.monotonic() + 120
    while no_temporary_file(workdir):  # the output is open: the run is under way
        assert time.monotonic() < deadline, "the temporary output file never appeared"
        time.sleep(0.05)
    os.kill(pid, signal.SIGTERM)
    result = cli.finish()
    assert result.returncode == 143, result.stderr[-3000:]
    assert result.stderr == "hf-punctcase: terminated (SIGTERM)\n"
    assert (workdir / "out.txt").read_text() == "precious\n"
    assert no_temporary_file(workdir)


def test_sigterm_that_lands_in_a_finalizer_still_ends_the_run():
    """A signal handler's exception raised inside ``__del__`` is printed and dropped by Python: the
    run went on to exit 0 with SIGTERM ignored. The signal is raised again once the finalizer returns."""
    from hf_punctcase.cli import Terminated, _sigterm_raises

    class SignalledWhileFinalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # bytecodes during which the handler runs, inside the finalizer
                pass

    with pytest.raises(Terminated), _sigterm_raises():
        SignalledWhileFinalized()  # finalized at once: the signal arrives inside __del__
        time.sleep(5)  # the signal, sent again, ends this sleep


# ---- symbolic links -------------------------------------------------------------------------------


@pytest.mark.parametrize("links", [{"loop": "loop"}, {"a": "b", "b": "a"}])
@pytest.mark.parametrize("command", ["restore", "card"])
def test_a_loop_of_links_is_a_fault(cli, workdir, tiny_model_dir, links, command):
    for name, target in links.items():
        os.symlink(target, workdir / name)
    argv = ["restore", "-m", tiny_model_dir, "so what"] if command == "restore" else ["card", tiny_model_dir]
    output = next(iter(links))
    result = cli(*argv, "-o", output, cwd=workdir)
    assert_fault(result, f"output {output} cannot be written", os.strerror(errno.ELOOP))
    assert {name: os.readlink(workdir / name) for name in links} == links
    assert no_temporary_file(workdir)


def test_a_link_target_is_replaced_not_the_link(cli, workdir, tiny_model_dir):
    os.symlink("out.txt", workdir / "link")
    result = cli("restore", "-m", tiny_model_dir, "so what", "-o", "link", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert os.readlink(workdir / "link") == "out.txt"
    assert (workdir / "out.txt").read_text().lower().split()[0].rstrip(".,?") == "so"


# ---- FIFOs and devices are written into -----------------------------------------------------------

SPECIAL_FILE_COMMANDS = {
    "restore": (["restore", "-m", "MODEL", "so what"], "So"),
    "subtitles": (["subtitles", "-m", "MODEL", "words.json"], "1\n00:00:00,000 --> "),
    "card": (["card", "MODEL"], "---"),
    "card --force": (["card", "MODEL", "--force"], "---"),
}


@pytest.mark.parametrize("name", list(SPECIAL_FILE_COMMANDS))
def test_a_fifo_is_written_into(cli, workdir, tiny_model_dir, name):
    argv, start = SPECIAL_FILE_COMMANDS[name]
    fifo = workdir / "fifo"
    os.mkfifo(fifo)
    # A reader that is there before the command opens the FIFO, and does not block: what the command
    # writes (a few KB) waits in the pipe's buffer until read after the command ended.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        result = cli(*[tiny_model_dir if arg == "MODEL" else arg for arg in argv], "-o", "fifo", cwd=workdir)
        received = b""
        while chunk := _read_available(reader):
            received += chunk
    finally:
        os.close(reader)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received.decode().startswith(start), received[:200]
    assert no_temporary_file(workdir)


@pytest.mark.parametrize("name", list(SPECIAL_FILE_COMMANDS))
def test_a_device_is_written_into(cli, workdir, tiny_model_dir, name):
    argv, _ = SPECIAL_FILE_COMMANDS[name]
    null = make_device(workdir, "null", 1, 3)
    result = cli(*[tiny_model_dir if arg == "MODEL" else arg for arg in argv], "-o", "null", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert no_temporary_file(workdir)


def _read_available(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return b""

"""``hf-punctcase ARGV`` in processes forked from one server that imported the package once (a fresh
interpreter per case would spend seconds importing torch and transformers each time), each with its own
stdin, stdout and stderr as a shell gives them. A request may send stdout to any path (``/dev/full``),
set a file size limit, or make stdout line-buffered (as ``PYTHONUNBUFFERED`` does), and the server
tells the pid of each command so that it can be sent a signal. The ``cli`` fixture is one server per
test module."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


_SERVER = textwrap.dedent(
    r"""
    import json, os, resource, signal, sys, traceback
    import hf_punctcase.cli as cli

    requests, replies = os.fdopen(int(sys.argv[1]), "r"), os.fdopen(int(sys.argv[2]), "w")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child is the command, with the stdin, stdout, stderr and limits it was given
            code = 1
            try:
                os.chdir(request["cwd"])
                os.dup2(os.open(request["stdin"], os.O_RDONLY), 0)
                os.dup2(os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC), 1)
                os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC), 2)
                sys.argv = ["hf-punctcase", *request["argv"]]
                if request["line_buffered"]:
                    sys.stdout.reconfigure(line_buffering=True)
                if request["file_size_limit"] is not None:
                    # As on a full disk: a write past the limit fails with EFBIG instead of killing the process.
                    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                    limit = request["file_size_limit"]
                    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
                try:
                    code = cli.main(request["argv"])
                except SystemExit as exit:
                    code = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
                except BaseException:
                    traceback.print_exc()
                    code = 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        replies.flush()
    """
)


class CommandLine:
    """``hf-punctcase ARGV`` in a forked process; :meth:`start` returns its pid, :meth:`finish` its result."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        request_read, self._requests = os.pipe()
        self._replies, reply_write = os.pipe()
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        self.server = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(request_read), str(reply_write)],
            pass_fds=(request_read, reply_write), stdin=subprocess.DEVNULL, env=env,
        )
        os.close(request_read)
        os.close(reply_write)
        self._count = 0
        self._files: dict[str, Path] = {}

    def start(
        self, *argv: str, cwd: Path | None = None, stdin: bytes = b"", stdout: str | None = None,
        file_size_limit: int | None = None, line_buffered: bool = False,
    ) -> int:
        self._count += 1
        files = {name: self.scratch / f"{self._count}.{name}" for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_bytes(stdin)
        files["stdout"].write_bytes(b"")
        files["stderr"].write_bytes(b"")
        if stdout is not None:
            files["stdout"] = Path(stdout)
        self._files = files
        request = {
            "argv": list(argv), "cwd": str(cwd or self.scratch), **{name: str(path) for name, path in files.items()},
            "file_size_limit": file_size_limit, "line_buffered": line_buffered,
        }
        os.write(self._requests, (json.dumps(request) + "\n").encode())
        return self._reply(timeout=60)["pid"]

    def finish(self, timeout: float = 300) -> Result:
        code = self._reply(timeout)["exit"]
        stdout = self._files["stdout"]
        return Result(
            code, stdout.read_text(encoding="utf-8", errors="replace") if stdout.is_file() else "",
            self._files["stderr"].read_text(encoding="utf-8", errors="replace"),
        )

    def __call__(self, *argv: str, **options) -> Result:
        self.start(*argv, **options)
        return self.finish()

    def _reply(self, timeout: float) -> dict:
        reply = b""
        while not reply.endswith(b"\n"):
            ready, _, _ = select.select([self._replies], [], [], timeout)
            assert ready, f"no reply from the command-line server in {timeout} s"
            reply += os.read(self._replies, 1)
        return json.loads(reply)

    def close(self) -> None:
        os.close(self._requests)
        self.server.wait(timeout=60)
        os.close(self._replies)


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    command_line = CommandLine(tmp_path_factory.mktemp("cli_scratch"))
    yield command_line
    command_line.close()

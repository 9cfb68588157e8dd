"""Fault injection: broken checkpoints, bad input and output files, odd text.

Every fault is made in a tmp folder and tried through the library (``load_pipeline`` and plain
``pipeline("punct-case")``) where the library meets it, and through the command line in a process of
its own. Each must end with exit code 2 and one line on stderr naming the path and the fault, with
every input and output file as it was (no temporary file left either).

Command-line cases run in processes forked from one server that imported the package once: a fresh
interpreter per case would spend ~4 s importing torch and transformers each time. The cases that
depend on interpreter start-up (stdin closed, undecodable bytes in argv) and the prompt a folder's
code could raise start a fresh interpreter through the ``hf-punctcase`` entry point.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from forked_cli import cli  # noqa: F401 (a fixture: one command-line server for this module)
from transformers import pipeline

import hf_punctcase
from hf_punctcase.labels import apply_case
from hf_punctcase.checkpoints import CheckpointError
from hf_punctcase.restoration import restored_trail

# ---- command line in its own process ------------------------------------------------------------

ENTRY_POINT = shutil.which("hf-punctcase", path=os.path.dirname(sys.executable)) or "hf-punctcase"


def fresh_cli(*argv, stdin=subprocess.DEVNULL, shell_redirect: str = "", **kwargs) -> subprocess.CompletedProcess:
    """The installed entry point in a new interpreter, started by a shell with ``shell_redirect``."""
    return subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {shell_redirect}', ENTRY_POINT, *argv], stdin=stdin, capture_output=True,
        timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"}, **kwargs,
    )


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and a hash of its bytes: a fault must leave this as it was."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*")) if path.is_file()
    }


def assert_fault(result, *fragments: str) -> None:
    """Exit code 2, nothing on stdout, one line on stderr holding each fragment (path, fault)."""
    stderr = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    stdout = result.stdout.decode() if isinstance(result.stdout, bytes) else result.stdout
    assert result.returncode == 2, stderr[-3000:]
    assert stdout == ""
    assert stderr.startswith("hf-punctcase: error: ") and stderr.count("\n") == 1, stderr
    for fragment in fragments:
        assert fragment in stderr, (fragment, stderr)


# ---- broken checkpoints ---------------------------------------------------------------------------


def _edit_config(folder: Path, edit) -> None:
    config = json.loads((folder / "config.json").read_text())
    edit(config)
    (folder / "config.json").write_text(json.dumps(config))


def _add_label(config: dict) -> None:
    config["punct_labels"] = config["punct_labels"] + ["EXCLAMATION"]
    config["id2label"] = dict(enumerate(config["punct_labels"]))
    config["label2id"] = {label: i for i, label in enumerate(config["punct_labels"])}


def _truncate(folder: Path, keep) -> None:
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: keep(len(data))])


def _specials_only_vocabulary(folder: Path) -> None:
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"] = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))


def _no_vocabulary(folder: Path) -> None:
    # As reported: tokenizer_config.json alone, naming the BERT tokenizer, loads one of 5 special tokens.
    (folder / "tokenizer.json").unlink()
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["tokenizer_class"] = "BertTokenizer"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


def _foreign_model_type(folder: Path) -> None:
    _edit_config(folder, lambda config: config.update(model_type="my_custom"))
    # Code that leaves a trace if it ever runs.
    with open(folder / "configuration.py", "a") as handle:
        handle.write(f"\nopen({str(folder.parent / 'CODE_RAN')!r}, 'w').close()\n")


#: name → (how to break a copy of the tiny checkpoint, what the message must say, the error type)
MODEL_FAULTS = {
    "folder missing": (lambda f: shutil.rmtree(f), "does not exist", FileNotFoundError),
    "no tokenizer vocabulary": (_no_vocabulary, "lacks a tokenizer vocabulary (tokenizer.json or vocab.txt)", FileNotFoundError),
    "vocabulary of special tokens only": (_specials_only_vocabulary, "tokenizer.json holds 5 tokens", CheckpointError),
    "tokenizer files all missing": (
        lambda f: [(f / n).unlink() for n in ("tokenizer.json", "tokenizer_config.json")], "lacks tokenizer_config.json",
        FileNotFoundError,
    ),
    "punct_labels removed": (
        lambda f: _edit_config(f, lambda c: c.pop("punct_labels")), "config.json has no punct_labels", CheckpointError
    ),
    "case_labels removed": (
        lambda f: _edit_config(f, lambda c: c.pop("case_labels")), "config.json has no case_labels", CheckpointError
    ),
    "wrong label count": (
        lambda f: _edit_config(f, _add_label),
        "config.json has 5 punct_labels but the weights' punct_classifier.weight has 4 rows", CheckpointError,
    ),
    "config not JSON": (lambda f: (f / "config.json").write_text("{not json"), "config.json is not valid JSON", CheckpointError),
    "weights missing": (lambda f: (f / "model.safetensors").unlink(), "lacks model weights", FileNotFoundError),
    "weights zero bytes": (lambda f: _truncate(f, lambda n: 0), "model.safetensors is empty", CheckpointError),
    "weights truncated in half": (
        lambda f: _truncate(f, lambda n: n // 2), "model.safetensors is truncated or not a safetensors file", CheckpointError
    ),
    "weights short by one byte": (
        lambda f: _truncate(f, lambda n: n - 1), "model.safetensors is truncated or not a safetensors file", CheckpointError
    ),
    "weights random bytes": (
        lambda f: (f / "model.safetensors").write_bytes(os.urandom(4096)),
        "model.safetensors is truncated or not a safetensors file", CheckpointError,
    ),
    "model type of another library": (
        _foreign_model_type, "model_type 'my_custom' is not one of this library's", CheckpointError
    ),
}


@pytest.fixture(params=list(MODEL_FAULTS))
def broken_checkpoint(request, tmp_path, tiny_model_dir):
    break_it, message, error_type = MODEL_FAULTS[request.param]
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    break_it(folder)
    return folder, message, error_type


def test_broken_checkpoint_through_the_library(broken_checkpoint):
    folder, message, error_type = broken_checkpoint
    before = snapshot(folder.parent)
    with pytest.raises(error_type) as caught:
        hf_punctcase.load_pipeline(folder)
    text = str(caught.value)
    assert str(folder) in text and message in text and "\n" not in text, text
    assert snapshot(folder.parent) == before
    assert not (folder.parent / "CODE_RAN").exists()


def test_broken_checkpoint_through_the_command_line(broken_checkpoint, cli):
    folder, message, _ = broken_checkpoint
    (folder.parent / "in.txt").write_text("so what are the risks\n")
    (folder.parent / "out.txt").write_text("precious\n")
    before = snapshot(folder.parent)
    result = cli("restore", "-m", str(folder), "-i", "in.txt", "-o", "out.txt", cwd=folder.parent)
    assert_fault(result, f"model path {folder}", message)
    assert snapshot(folder.parent) == before


def test_folder_code_never_runs_and_nothing_prompts(tmp_path, tiny_model_dir):
    """A folder whose model type transformers does not know: without --trust-remote-code its code does
    not run, no prompt shows on stdout, and the piped transcript is not read as an answer."""
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_model_dir, folder)
    _foreign_model_type(folder)
    result = fresh_cli("restore", "-m", str(folder), stdin=None, input=b"y\nso what are the risks\n")
    assert_fault(result, str(folder), "model_type 'my_custom'", "--trust-remote-code")
    assert not (tmp_path / "CODE_RAN").exists()


def test_a_local_path_that_is_missing_is_named():
    with pytest.raises(FileNotFoundError, match="model path /nope does not exist"):
        hf_punctcase.load_pipeline("/nope")


# ---- input and output files -----------------------------------------------------------------------

LINES = ["so what are the risks", "i am not technical", "", "the doctor asked whether the patient had any pain"]


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "in.txt").write_text("\n".join(LINES) + "\n")
    (tmp_path / "out.txt").write_text("precious\n")
    return tmp_path


def test_output_may_be_the_input(cli, workdir, tiny_model_dir):
    result = cli("restore", "-m", tiny_model_dir, "-i", "in.txt", "-o", "in.txt", cwd=workdir)
    assert result.returncode == 0, result.stderr
    restored = (workdir / "in.txt").read_text().split("\n")
    assert restored[-1] == "" and len(restored) - 1 == len(LINES)
    for line, out in zip(LINES, restored):
        assert [w.lower().rstrip(".,?") for w in out.split()] == line.split()
    assert sorted(p.name for p in workdir.iterdir()) == ["in.txt", "out.txt"]  # no temporary file left


FILE_FAULTS = {
    # name → (file set-up, argv after "restore -m MODEL", stdin, message fragments)
    "missing input, existing output": (None, ["-i", "nope.txt", "-o", "out.txt"], b"", ["input nope.txt does not exist"]),
    "input is a folder": (None, ["-i", ".", "-o", "out.txt"], b"", ["input . is a folder"]),
    "binary input (a PNG header)": (
        lambda d: (d / "bin.dat").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), ["-i", "bin.dat", "-o", "out.txt"], b"",
        ["input bin.dat: line 1 is not valid UTF-8 (byte 0x89"],
    ),
    "NUL bytes in input": (
        lambda d: (d / "nul.txt").write_bytes(b"so what\nab\x00c\n"), ["-i", "nul.txt", "-o", "out.txt"], b"",
        ["input nul.txt: line 2 contains NUL bytes"],
    ),
    "random bytes input": (
        lambda d: (d / "bin.dat").write_bytes(b"\xbd\xb2=\xbc \xf1\xff\x8e"), ["-i", "bin.dat", "-o", "out.txt"], b"",
        ["input bin.dat: line 1 is not valid UTF-8 (byte 0xbd"],
    ),
    "latin-1 line in a file": (
        lambda d: (d / "l1.txt").write_bytes(b"so what\n" * 300 + b"caf\xe9 risks\nthe end\n"), ["-i", "l1.txt", "-o", "out.txt"],
        b"", ["input l1.txt: line 301 is not valid UTF-8 (byte 0xe9", "--errors replace"],
    ),
    "latin-1 line in a file restored onto itself": (
        lambda d: (d / "l1.txt").write_bytes(b"so what\ncaf\xe9 risks\n"), ["-i", "l1.txt", "-o", "l1.txt"], b"",
        ["input l1.txt: line 2 is not valid UTF-8"],
    ),
    # Streamed input is checked as it is read: 300 good lines (more than one pipeline call) come first.
    "latin-1 line on stdin": (
        None, ["-o", "out.txt"], b"so what\n" * 300 + b"caf\xe9 risks\n", ["stdin: line 301 is not valid UTF-8 (byte 0xe9"]
    ),
    "output folder missing": (None, ["so what", "-o", "no/such/out.txt"], b"", ["output no/such/out.txt cannot be written", "does not exist"]),
    "output under a file": (None, ["so what", "-o", "in.txt/out.txt"], b"", ["output in.txt/out.txt cannot be written", "is not a folder"]),
    "output is a folder": (None, ["so what", "-o", "."], b"", ["output . is a folder"]),
    "negative context words": (None, ["so what", "--context-words", "-1"], b"", ["context_words must be ≥ 0"]),
    "device that is not there": (None, ["so what", "--device", "nodevice"], b"", ["--device 'nodevice' is not a device"]),
}


@pytest.mark.parametrize("name", list(FILE_FAULTS))
def test_file_fault(cli, workdir, tiny_model_dir, name):
    set_up, argv, stdin, fragments = FILE_FAULTS[name]
    if set_up:
        set_up(workdir)
    before = snapshot(workdir)
    result = cli("restore", "-m", tiny_model_dir, *argv, stdin=stdin, cwd=workdir)
    assert_fault(result, *fragments)
    assert snapshot(workdir) == before


def test_undecodable_input_replaced_on_request(cli, workdir, tiny_model_dir):
    (workdir / "l1.txt").write_bytes(b"so what\ncaf\xe9 risks\n")
    result = cli("restore", "-m", tiny_model_dir, "-i", "l1.txt", "--errors", "replace", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert len(lines) == 3 and lines[1].split()[0].lower() == "caf\ufffd"


def test_lines_end_at_newline_only(cli, workdir, tiny_model_dir):
    """A stray carriage return (or U+2028) is whitespace inside a line, from a file as from stdin."""
    data = "so what\rare the risks\r\ni am\u2028not technical\nthe end\n".encode()
    (workdir / "cr.txt").write_bytes(data)
    from_file = cli("restore", "-m", tiny_model_dir, "-i", "cr.txt", cwd=workdir)
    from_stdin = cli("restore", "-m", tiny_model_dir, stdin=data, cwd=workdir)
    for result in (from_file, from_stdin):
        assert result.returncode == 0, result.stderr
        lines = result.stdout.split("\n")
        assert len(lines) == 4 and lines[-1] == ""
        assert [w.lower().rstrip(".,?") for w in lines[0].split()] == ["so", "what", "are", "the", "risks"]
    assert from_file.stdout == from_stdin.stdout


def test_stdin_closed(tiny_model_dir, tmp_path):
    # The interpreter starts with fd 0 closed: sys.stdin is None.
    result = fresh_cli("restore", "-m", tiny_model_dir, "-o", str(tmp_path / "out.txt"), shell_redirect="<&-")
    assert_fault(result, "stdin is closed")
    assert list(tmp_path.iterdir()) == []


def test_undecodable_argument(cli, tiny_model_dir):
    result = fresh_cli("restore", "-m", tiny_model_dir, b"caf\xe9 risks")
    assert_fault(result, "the TEXT argument is not valid UTF-8 (byte 0xe9", "--errors replace")
    # What the interpreter makes of those bytes in argv (surrogateescape), given to the command as such.
    replaced = cli("restore", "-m", tiny_model_dir, "--errors", "replace", os.fsdecode(b"caf\xe9 risks"))
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.split()[0].lower() == "caf\ufffd"


# ---- odd text through the library -----------------------------------------------------------------


def test_lone_surrogate_passes_through(tiny_pipeline):
    result = tiny_pipeline("caf\udce9 so what \ud800 risks")
    tokens = result["text"].split(" ")
    assert len(tokens) == 5 and tokens[0] == "caf\udce9" and tokens[3] == "\ud800"
    assert [t.lower().rstrip(".,?") for t in (tokens[1], tokens[2], tokens[4])] == ["so", "what", "risks"]
    assert tiny_pipeline(["caf\udce9", "so"])[0]["text"] == "caf\udce9"
    assert tiny_pipeline(["caf\udce9", "so"], is_split_into_words=True)["text"].split(" ")[0] == "caf\udce9"


@pytest.mark.parametrize("window_words, context_words", [(200, -1), (10, 5), (0, 0)])
def test_window_arguments_are_validated(tiny_pipeline, window_words, context_words):
    text = " ".join(["so what are the risks"] * 9)
    with pytest.raises(ValueError, match="context_words|window_words"):
        tiny_pipeline(text, window_words=window_words, context_words=context_words)


@pytest.mark.parametrize("word", ["ıstanbul", "ſo", "ẛ", "ẛſı"])
def test_capitals_keep_the_letter(tiny_pipeline, word):
    """Letters whose capital lowercases to another letter stay as they are: the word is still the
    input word up to case."""
    for label in ("LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED"):
        assert apply_case(word, label).lower() == word.lower()
    result = tiny_pipeline(f"{word} so what {word}")
    tokens = result["text"].split(" ")
    assert tokens[0].rstrip(".,?").lower() == word and tokens[3].rstrip(".,?").lower() == word


def test_capitals_still_change_other_letters():
    assert apply_case("istanbul", "UPPER_FIRST") == "Istanbul"
    assert apply_case("straße", "ALL_UPPER") == "STRAßE"
    assert apply_case("éric", "UPPER_FIRST") == "Éric"


@pytest.mark.parametrize(
    "trail, mark, expected",
    [("", ",", ","), ('"', "", '"'), ('"', ".", '".'), (")", ".", ")."), ('."', ",", ',"'), ('."', ".", '."'),
     ('?")', "", '")'), ("),", "?", ")?"), ("...", ",", ","), ("--", "", "")],
)
def test_restored_trail(trail, mark, expected):
    assert restored_trail(trail, mark) == expected


def test_closing_quotes_and_brackets_stay(tiny_pipeline):
    text = '"hello" (world) he said "so what." (the risks) [i am]'
    for keep in (False, True):
        tokens = tiny_pipeline(text, keep_punctuation=keep)["text"].split(" ")
        assert len(tokens) == len(text.split())
        for word, token in zip(text.split(), tokens):
            # The token is the word up to case with its own marks replaced by at most one predicted mark.
            assert [c for c in token.lower() if c not in ".,?"] == [c for c in word if c not in ".,?"], (word, token)
    default = tiny_pipeline(text)["text"].split(" ")
    assert default[0].lower().startswith('"hello"') and default[1].lower().startswith("(world)")
    assert default[-1].lower().startswith("am]")


def test_the_command_line_keeps_letters_and_brackets(cli, workdir, tiny_model_dir):
    text = 'ıstanbul "hello" (world) ſo ẛ'
    result = cli("restore", "-m", tiny_model_dir, text, cwd=workdir)
    assert result.returncode == 0, result.stderr
    tokens = result.stdout.rstrip("\n").split(" ")
    assert [[c for c in t.lower() if c not in ".,?"] for t in tokens] == [list(w) for w in text.split()]

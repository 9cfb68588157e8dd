import io
import json
import subprocess
import sys

import pytest

from hf_punctcase.cli import main


def _run(monkeypatch, capsys, argv, stdin=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_text_argument(monkeypatch, capsys, tiny_model_dir):
    code, out, _ = _run(monkeypatch, capsys, ["restore", "so what are the risks", "--model", tiny_model_dir])
    assert code == 0
    assert [w.lower().rstrip(".,?") for w in out.split()] == ["so", "what", "are", "the", "risks"]


def test_stdin_lines_and_json(monkeypatch, capsys, tiny_model_dir):
    code, out, _ = _run(
        monkeypatch, capsys, ["restore", "--model", tiny_model_dir, "--json", "--batch-size", "2"],
        stdin="so what are the risks\n\ni am not technical\n",
    )
    assert code == 0
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == 3
    assert results[1] == {"text": "", "words": []}
    assert [w["word"].lower().rstrip(".,?") for w in results[2]["words"]] == ["i", "am", "not", "technical"]


def test_files(monkeypatch, capsys, tiny_model_dir, tmp_path):
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = ["so what are the risks", "the doctor asked whether the patient had any pain"] * 20
    source.write_text("\n".join(lines) + "\n")
    code, out, _ = _run(monkeypatch, capsys, ["restore", "-i", str(source), "-o", str(target), "-m", tiny_model_dir])
    assert code == 0 and out == ""
    restored = target.read_text().splitlines()
    assert len(restored) == len(lines)
    for line, result in zip(lines, restored):
        assert [w.lower().rstrip(".,?") for w in result.split()] == line.split()


def test_bad_model_path(monkeypatch, capsys, tmp_path):
    code, _, err = _run(monkeypatch, capsys, ["restore", "hello", "--model", str(tmp_path / "missing")])
    assert code == 2
    assert f"{tmp_path / 'missing'} does not exist" in err


def test_usage_errors(monkeypatch, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["restore", "hello", "--input", str(tmp_path / "x.txt")])
    with pytest.raises(SystemExit):
        main(["restore", "hello", "--batch-size", "0"])


def test_console_script(tiny_model_dir):
    """The installed entry point works in a fresh process, reading stdin."""
    result = subprocess.run(
        ["hf-punctcase", "restore", "--model", tiny_model_dir],
        input="so what are the risks\n", capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert [w.lower().rstrip(".,?") for w in result.stdout.split()] == ["so", "what", "are", "the", "risks"]

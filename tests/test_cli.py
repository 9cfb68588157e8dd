import json
import random
import subprocess

import pytest

from conftest import TEST_DTYPE_NAME, VOCABULARY, run_cli
from hf_punctcase.cli import main


def test_text_argument(monkeypatch, capsys, tiny_model_dir):
    code, out, _ = run_cli(monkeypatch, capsys, ["restore", "so what are the risks", "--model", tiny_model_dir])
    assert code == 0
    assert [w.lower().rstrip(".,?") for w in out.split()] == ["so", "what", "are", "the", "risks"]


def test_stdin_lines_and_json(monkeypatch, capsys, tiny_model_dir):
    code, out, _ = run_cli(
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
    code, out, _ = run_cli(monkeypatch, capsys, ["restore", "-i", str(source), "-o", str(target), "-m", tiny_model_dir])
    assert code == 0 and out == ""
    restored = target.read_text().splitlines()
    assert len(restored) == len(lines)
    for line, result in zip(lines, restored):
        assert [w.lower().rstrip(".,?") for w in result.split()] == line.split()


def test_lines_end_sentences_unless_asked_not_to(monkeypatch, capsys, tiny_model_dir, tiny_pipeline):
    rng = random.Random(3)
    lines = [" ".join(rng.choice(VOCABULARY) for _ in range(n)) for n in range(1, 30)]
    closed, pieces = ([result["text"] for result in tiny_pipeline(lines, ends_sentence=ends)] for ends in (True, False))
    assert all(line[-1] in ".?" for line in closed) and closed != pieces  # the tiny model leaves an end open
    for flag, expected in (([], closed), (["--no-ends-sentence"], pieces)):
        # the fixture's dtype, not the CLI's auto, which is bf16 on CPUs with bf16 instructions
        code, out, _ = run_cli(monkeypatch, capsys, ["restore", "-m", tiny_model_dir, "--dtype", TEST_DTYPE_NAME, *flag],
                               stdin="\n".join(lines))
        assert code == 0 and out.splitlines() == expected


def test_bad_model_path(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, ["restore", "hello", "--model", str(tmp_path / "missing")])
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


def test_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["restore", "--help"])
    assert exit.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for default in ("(default: cpu)", "(default: auto)", "(default: 200)", "(default: 50)", "(default: default)",
                    "(default: strict)", "(default: refuse)"):
        assert default in help_text, default
    assert "--trust-remote-code" in help_text and "--progress" in help_text


def test_default_model_by_name(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "-m", "default", "so what are the risks i am not technical"])
    assert code == 0, err
    assert [w.lower().rstrip(".,?") for w in out.split()] == "so what are the risks i am not technical".split()
    code, out, err = run_cli(monkeypatch, capsys, ["card", "default", "-o", "-"])
    assert code == 0 and out.startswith("---"), err


def test_one_progress_bar_over_the_whole_input(monkeypatch, capsys, tiny_model_dir, tmp_path):
    """300 lines are 3 pipeline calls at --batch-size 16: one bar counts all of them, sized by the
    file's line count; stdin has no count; without a terminal or --progress, no bar."""
    source = tmp_path / "in.txt"
    source.write_text("so what are the risks\n" * 300)
    argv = ["restore", "-m", tiny_model_dir, "-i", str(source), "-o", str(tmp_path / "out.txt")]
    code, _, err = run_cli(monkeypatch, capsys, argv + ["--progress"])
    assert code == 0 and "300/300" in err and "/128" not in err and err.count("punct-case:") >= 1, err
    code, _, err = run_cli(monkeypatch, capsys, argv)
    assert code == 0 and err == ""
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "-m", tiny_model_dir, "--progress"], stdin="so what\n" * 300)
    assert code == 0 and len(out.splitlines()) == 300 and "300line" in err.replace(" ", "") and "/300" not in err, err


def test_device_dtype_and_window_options(tiny_model_dir, monkeypatch, capsys):
    import torch

    from hf_punctcase.cli import build_parser, load_restorer
    from hf_punctcase.hardware import detect_hardware

    def restorer(*options):
        return load_restorer(build_parser().parse_args(["restore", "-m", tiny_model_dir, *options]))

    auto = restorer()
    assert auto.device.type == "cpu" and auto.model.dtype == (torch.bfloat16 if detect_hardware().cpu_bf16 else torch.float32)
    assert restorer("--dtype", "float32").model.dtype == torch.float32
    assert restorer("--dtype", "bfloat16", "--device", "cpu").model.dtype == torch.bfloat16
    windows = restorer("--window-words", "10", "--context-words", "2")
    assert windows._preprocess_params["progress"] is False
    assert (windows._preprocess_params["options"].window_words, windows._preprocess_params["options"].context_words) == (10, 2)
    assert windows._preprocess_params["options"].vote_windows is False
    assert restorer("--vote-windows")._preprocess_params["options"].vote_windows is True
    text = " ".join(["so what are the risks"] * 10)
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "-m", tiny_model_dir, "--window-words", "10",
                                                "--context-words", "2", "--dtype", "bfloat16", text])
    assert code == 0, err
    assert [w.lower().rstrip(".,?") for w in out.split()] == text.split()

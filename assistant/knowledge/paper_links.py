"""Seed abstracts that are arXiv records: their arXiv id and title, from a table shipped in the package.

The table (`paper_links.json`, keyed by the seed entry's content id) is built from the repository's
own corpora by `scripts/link_seed_abstracts.py`; see that script for why it is a table and not a
read of the mlsys pack at parse time. Loaded once, on the first related-papers page parsed.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LINKS_PATH = Path(__file__).resolve().parent / "paper_links.json"


@lru_cache(maxsize=1)
def _links() -> dict[str, dict[str, str]]:
    try:
        data: dict[str, dict[str, str]] = json.loads(LINKS_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data


def linked_paper(entry_id: str) -> tuple[str, str] | None:
    """(arXiv id, title) of the record a seed abstract is the start of, or None."""
    link = _links().get(entry_id)
    return (link["arxiv_id"], link["title"]) if link else None

"""The files a home holds that the assistant wrote, so knowledge that contains the home never reads them.

ASSISTANT_HOME may be the knowledge folder itself, or a folder inside it. A sync then walks past the
index's own files (the manifest, the generation files, Chroma's folder, the serving marker, the
ratings): read as knowledge they would be problems on every sync, and since each commit writes a new
generation file, the index would never look up to date. The user's own files beside them, whatever
their names, are knowledge as usual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from assistant.index.lock import LOCK_NAME
from assistant.index.serving import MARKER
from assistant.index.store import GENERATION_FILE, LEDGER, MANIFEST, TEMPORARIES

INDEX_FILES = {MANIFEST, LEDGER, LOCK_NAME, *TEMPORARIES}
INDEX_FOLDERS = ("chroma", "chroma.damaged", "cache")  # Chroma's files, one moved aside, a replica's cache
HOME_FILES = re.compile(rf"{re.escape(MARKER)}|serving\.[0-9]+\.tmp|feedback\.jsonl")


def written_by_assistant(home: Path) -> Callable[[Path], bool]:
    """A test for a path: is it one of the files the assistant writes under `home`?"""
    home_path = os.path.realpath(home)
    index = os.path.join(home_path, "index")

    def owned(path: Path) -> bool:
        real = os.path.realpath(path)
        parent, name = os.path.split(real)
        if parent == home_path:
            return bool(HOME_FILES.fullmatch(name))
        if not real.startswith(index + os.sep):
            return False
        first = real[len(index) + 1 :].split(os.sep, 1)[0]
        if parent == index:
            return name in INDEX_FILES or bool(GENERATION_FILE.fullmatch(name))
        return first in INDEX_FOLDERS or bool(re.fullmatch(r"lexical-[0-9]+", first))

    return owned

"""`.assistantignore`: files in a knowledge folder that are not knowledge (a pack's README, its licence).

One pattern per line, `#` for comments, as in `.gitignore` but simpler: a pattern without `/` matches
a file name anywhere below the folder that holds the ignore file (`README.md`, `*.png`); a pattern
with `/` matches the path relative to that folder (`drafts/*`, `assets/**`). Ignored files are
counted in the sync report, not listed as problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path

IGNORE_FILE = ".assistantignore"


@dataclass(frozen=True)
class IgnoreRules:
    rules: tuple[tuple[Path, str], ...] = ()  # (folder holding the ignore file, pattern)

    def matches(self, path: Path) -> bool:
        for folder, pattern in self.rules:
            try:
                relative = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            if "/" in pattern:
                if fnmatch(relative, pattern.lstrip("/")) or fnmatch(relative, pattern.lstrip("/").rstrip("*") + "*"):
                    return True
            elif fnmatch(path.name, pattern):
                return True
        return False


@lru_cache(maxsize=256)
def _patterns(ignore_file: Path, mtime_ns: int) -> tuple[str, ...]:
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()[:1000]
    except OSError:
        return ()
    return tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def ignore_rules(folder: Path, root: Path | None = None) -> IgnoreRules:
    """The rules that apply in `folder`: those of its own ignore file and of every folder above it up to `root`."""
    rules: list[tuple[Path, str]] = []
    for here in [folder, *folder.parents]:
        candidate = here / IGNORE_FILE
        try:
            mtime = candidate.stat().st_mtime_ns if candidate.is_file() else None
        except OSError:
            mtime = None
        if mtime is not None:
            rules += [(here, pattern) for pattern in _patterns(candidate, mtime)]
        if root is not None and here == root:
            break
    return IgnoreRules(tuple(rules))

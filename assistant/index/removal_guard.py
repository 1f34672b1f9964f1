"""The guard that keeps a sync from removing most of an index by mistake.

A sync that would remove more than half of the entries stops before it changes anything, unless
`--yes` (or a rebuild) says so, whenever the removal looks like a mistake:

- the knowledge yields no entries at all (a wrong or empty path, files of a format it does not read);
- it is the knowledge the index holds, or part of it (a half-mounted share, one file of the folder
  the home follows: `assistant index docs/one-file.md`);
- it replaces knowledge the user chose (anything but the shipped default, `knowledge/seed`).

Replacing the shipped default with your own knowledge needs no `--yes`: that is how a home starts.
A sync that would replace chosen knowledge without naming paths (ASSISTANT_KNOWLEDGE, a one-off
override at start-up) refuses with `KnowledgeSwitchRefused`, a settings error that never falls back
to answering from the other knowledge.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from assistant.errors import SettingsError
from assistant.index.sync_report import RemovalRefused
from assistant.settings import Settings
from assistant.types import Problem

SHIPPED_SEED = Path(__file__).resolve().parents[2] / "knowledge" / "seed"


class KnowledgeSwitchRefused(SettingsError):
    """Settings name other knowledge than the home follows, and syncing it would remove most of it."""


def comparable(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(path))))


def is_default_knowledge(held: Sequence[str]) -> bool:
    """Whether the index holds the shipped default knowledge (named relative or absolute)."""
    names = [comparable(p) for p in held]
    return names in ([comparable(p) for p in Settings().knowledge], [comparable(SHIPPED_SEED)])


def overlaps(roots: Sequence[Path], held: Sequence[str]) -> bool:
    """Whether the knowledge synced is the knowledge held, part of it, or holds part of it."""
    ours, theirs = [comparable(p) for p in roots], [comparable(p) for p in held]
    return any(
        a == b or a.startswith(b.rstrip(os.sep) + os.sep) or b.startswith(a.rstrip(os.sep) + os.sep)
        for a in ours
        for b in theirs
    )


def shown(paths: Sequence[Path | str]) -> str:
    return " ".join(shlex.quote(Path(p).as_posix()) for p in paths)


def check_removal(
    *,
    removed: int,
    total: int,
    yields: int,
    roots: Sequence[Path],
    held: Sequence[str],
    named: bool,
    problems: Sequence[Problem],
) -> None:
    """Raise when this sync would remove more than half of the index by mistake (see the module).

    `yields`: entries the knowledge gave; `held`: the knowledge the index holds; `named`: the paths
    were named for this sync (`assistant index PATH`), not taken from the settings.
    """
    if removed * 2 <= total:
        return
    paths = shown(roots)
    if not yields:
        why = f" ({problems[0].message})" if len(problems) == 1 else ""
        raise RemovalRefused(
            f"{paths or 'the knowledge'} yields no entries{why}, so this sync would remove {removed} of the "
            f"{total} entries in the index - nothing was changed; check the path, or to empty the index "
            f"run: assistant index {paths} --yes",
            removed,
            total,
        )
    again = f"assistant index {paths} --yes" if named else "assistant index --yes"
    if overlaps(roots, held) or not held:
        raise RemovalRefused(
            f"This sync of {paths} would remove {removed} of the {total} entries in the index (their files are "
            f"not in it: a share not mounted, or only part of the knowledge named) - nothing was changed; check "
            f"the path, or if they are gone for good run: {again}",
            removed,
            total,
        )
    if is_default_knowledge(held):
        return
    followed = shown(held)
    if named:
        raise RemovalRefused(
            f"assistant index {paths} would replace {followed}, the knowledge this home follows, and remove "
            f"{removed} of its {total} entries - nothing was changed; to switch run: {again}, or keep both by "
            f"setting ASSISTANT_HOME to another folder for {paths}",
            removed,
            total,
        )
    raise switch_refused(followed, paths, total, f"syncing it would remove {removed} of them")


def check_rebuild(roots: Sequence[Path], held: Sequence[str], total: int) -> None:
    """Raise when a rebuild from the settings' knowledge would put it in place of knowledge the user chose."""
    if held and total and not overlaps(roots, held) and not is_default_knowledge(held):
        raise switch_refused(shown(held), shown(roots), total, "a rebuild would drop them for it")


def switch_refused(followed: str, paths: str, total: int, what: str) -> KnowledgeSwitchRefused:
    return KnowledgeSwitchRefused(
        f"This home follows {followed} ({total} entries); the settings name {paths}, and {what} - nothing "
        f"was changed; use a home of its own (ASSISTANT_HOME=another folder), or unset ASSISTANT_KNOWLEDGE, "
        f"or to switch this home run: assistant index {paths} --yes"
    )

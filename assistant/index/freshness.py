"""Whether the index still holds the configured knowledge, decided without parsing it.

Every commit records the knowledge paths it was built from and a fingerprint of each file
(size, modification time, SHA-256). At start-up `stale_reason` compares them with
`settings.knowledge` and the files on disk: a file whose size and time are unchanged is taken as
unchanged; otherwise its bytes are hashed, so a touched but unchanged file costs one hash, never
a parse or an encoder call. Only when something really differs does the caller run a sync.

`knowledge_problem` names a path that cannot be read at all, so a start-up sync never treats
a mistyped path as "every entry was removed".
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.errors import AssistantError
from assistant.index.store import Store
from assistant.knowledge.corpus import (
    READING,
    Corpus,
    display_path,
    iter_knowledge_files,
    not_regular,
    under,
    virtual_tree,
)
from assistant.settings import Settings

Fingerprints = dict[str, dict[str, Any]]  # display path -> {"size", "mtime_ns", "sha256"}


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(path: Path) -> dict[str, Any] | None:
    """Size, times and content hash of a file (hash None when it cannot be read); None when it is gone."""
    try:
        stat = path.stat()
    except OSError:
        return None
    try:
        digest: str | None = file_digest(path)
    except OSError:
        digest = None
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns, "sha256": digest}


def fingerprints(
    paths: Iterable[Path], skip: Callable[[Path], bool] | None = None, follow_links: bool = False
) -> Fingerprints:
    """The fingerprint of every knowledge file under `paths`, by display path; `skip` leaves files out
    (the index's own, when the home lies inside the knowledge); links out of a folder count only when
    `follow_links` (ASSISTANT_FOLLOW_LINKS), as the sync reads them."""
    found: Fingerprints = {}
    for path, _ in iter_knowledge_files([Path(p) for p in paths], Corpus(), follow_links):
        if skip is not None and skip(path):
            continue
        current = fingerprint(path)
        if current is not None:
            found[display_path(path)] = current
    return found


def as_now(files: Fingerprints, damaged: Sequence[str]) -> Fingerprints:
    """`files` with the files a sync could not read (`damaged`, files or folders) fingerprinted as they are now.

    Their entries were kept as they were; recording their present state means the next start does not
    sync again for the same failure, while a file made readable again (its ctime changes) does.
    """
    out = {name: value for name, value in files.items() if not under(name, damaged)}
    for name in files:
        if under(name, damaged):
            now = fingerprint(Path(name))
            if now is not None:
                out[name] = now
    return out


def knowledge_names(paths: Iterable[Path]) -> list[str]:
    """How the manifest records knowledge paths: as given, in POSIX form."""
    return [Path(p).as_posix() for p in paths]


def same_path(name: str) -> str:
    """A recorded knowledge path in comparable form: `knowledge/seed` and its absolute form are one path."""
    return os.path.normpath(os.path.abspath(name))


def stale_reason(
    manifest: dict[str, Any] | None,
    knowledge: Sequence[Path],
    skip: Callable[[Path], bool] | None = None,
    follow_links: bool = False,
) -> str | None:
    """Why the committed index does not hold `knowledge` as it is on disk now, or None when it does;
    `skip` and `follow_links` as for `fingerprints`."""
    wanted = knowledge_names(knowledge)
    if manifest is None or not manifest.get("entries"):
        return "the index is empty"
    held = manifest.get("knowledge")
    if not isinstance(held, list) or [same_path(p) for p in held] != [same_path(p) for p in wanted]:
        return f"the index holds {':'.join(held or []) or 'other knowledge'}, the settings name {':'.join(wanted)}"
    if manifest.get("reading") != READING:  # the same files may read differently now: a sync reads them again
        return "the knowledge was read by an earlier version of its readers"
    recorded: Fingerprints | None = manifest.get("files")
    if not isinstance(recorded, dict):
        return "the index does not record its files yet"
    current = set()
    for path, _ in iter_knowledge_files([Path(p) for p in knowledge], Corpus(), follow_links):
        if skip is not None and skip(path):
            continue
        shown = display_path(path)
        current.add(shown)
        old = recorded.get(shown)
        if old is None:
            return f"{shown} is new"
        try:
            stat = path.stat()
            now = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
            if now == (old.get("size"), old.get("mtime_ns"), old.get("ctime_ns")):
                continue
            if stat.st_size == old.get("size") and file_digest(path) == old.get("sha256"):
                continue  # touched, not changed
        except OSError:
            if old.get("sha256") is None:
                continue  # still unreadable: its entries were kept, a sync would keep them again
        return f"{shown} changed"
    gone = sorted(set(recorded) - current)
    return f"{gone[0]} was removed" if gone else None


def followed_knowledge(settings: Settings, manifest: dict[str, Any] | None = None) -> Settings:
    """The settings with the knowledge this home follows, when ASSISTANT_KNOWLEDGE does not name one.

    `assistant index PATH` builds the index from PATH and the manifest records it; later `ask`,
    `chat` and `serve` without ASSISTANT_KNOWLEDGE follow that, instead of syncing the index back to
    the default knowledge. A home without a committed index keeps the default. With a Chroma server the
    caller passes the server's `manifest`.
    """
    if not settings.follows_home:
        return settings
    if manifest is None and not settings.chroma_url:  # a server's manifest is read by the Index
        try:
            manifest = Store(Path(settings.home) / "index").manifest()
        except AssistantError:  # a damaged manifest: the Index says so when it opens
            return settings
    held = (manifest or {}).get("knowledge")
    if not manifest or not isinstance(held, list) or not held:
        return settings
    if not all(isinstance(p, str) and p for p in held):
        return settings
    return replace(settings, knowledge=tuple(Path(p) for p in held))


FIX_SETTING = "fix ASSISTANT_KNOWLEDGE (paths joined by ':')"


def knowledge_problem(paths: Sequence[Path], setting: str = FIX_SETTING) -> str | None:
    """A one-line message for a knowledge path that does not exist, cannot be read or is not a file or
    folder (a FIFO, a device, /proc), else None; `setting` says what to fix.

    Tried, not inferred from permission bits (root reads a chmod 000 file). Nothing is read: a FIFO
    is never opened.
    """
    for path in map(Path, paths):
        shown = path.as_posix()
        if not path.exists():
            broken = " (a broken link)" if path.is_symlink() else ""
            return f"The knowledge path {shown} does not exist{broken} - {setting}"
        odd = not_regular(path) or ("a virtual file system" if virtual_tree(path) else None)
        if odd:
            return f"The knowledge path {shown} is {odd}, not a file or folder of knowledge - {setting}"
        try:
            if path.is_dir():
                with os.scandir(path):
                    pass
            else:
                with path.open("rb"):
                    pass
        except OSError as error:
            reason = error.strerror or type(error).__name__
            return f"The knowledge path {shown} cannot be read ({reason}) - make it readable or {setting}"
    return None

"""Search an index that cannot be written: a read-only home, or a disk with no space left.

Embedded Chroma writes to its SQLite file as it opens (even to search), so a home baked read-only
into an image, or a disk a failed sync filled, could not answer at all. The committed index is
still whole: when Chroma cannot open it in place for either reason, a copy of its Chroma folder
is opened from a temporary folder on another file system with room (memory-backed /dev/shm
first, then the system's temporary folder), removed when the process exits. Nothing in the home
is written; the one-line note says why and where.

A search that fails on a full disk is retried on such a copy too: embedded Chroma applies its log
before it reads, and the log of a write that failed for lack of space cannot be applied in place
(`ChromaConnection._read`). `low_on_space` tells that failure from damage, since Chroma's message
names its own step, not the disk.

`space_needed` estimates what a sync needs free, for the full-disk message: a sync writes a new
generation of the entry and lexical files beside the old one and adds vectors to Chroma, so the
index's own size is a fair upper bound.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import shutil
import tempfile
from pathlib import Path

READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
PLACES = ("/dev/shm", None)  # None: tempfile's own choice (TMPDIR, /tmp, ...)
# Chroma fails to write with less than this free, and its errors then name its own step
# ("Error in compaction: Failed to apply logs"), not the disk: a failure with so little room is a full disk
LOW_SPACE = 16 << 20


def free_bytes(path: Path) -> int | None:
    """Bytes free for this user on the file system holding `path` (or its nearest existing parent)."""
    for place in [path, *path.parents]:
        if place.exists():
            try:
                return shutil.disk_usage(place).free
            except OSError:
                return None
    return None


def low_on_space(path: Path) -> bool:
    """Whether the file system holding `path` has (next to) no room left."""
    free = free_bytes(path)
    return free is not None and free < LOW_SPACE


def is_read_only(error: BaseException | None) -> bool:
    """A failure to write because the home may not be written: EROFS/EACCES/EPERM, or SQLite's
    'attempt to write a readonly database', anywhere in the chain."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, OSError) and error.errno in READ_ONLY:
            return True
        if "readonly database" in str(error).lower():
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def folder_size(path: Path) -> int:
    """Bytes of the files under `path` (0 when it cannot be read)."""
    total = 0
    with contextlib.suppress(OSError):
        for item in path.rglob("*"):
            with contextlib.suppress(OSError):
                if item.is_file():
                    total += item.stat().st_size
    return total


def copy_to_temporary(folder: Path) -> Path:
    """A copy of `folder` in a temporary folder with room for it, removed at exit; OSError when none has."""
    size = folder_size(folder)
    last: OSError | None = None
    for place in PLACES:
        try:
            if place is not None and not Path(place).is_dir():
                continue
            if shutil.disk_usage(place or tempfile.gettempdir()).free < size * 1.2 + (16 << 20):
                continue
            target = Path(tempfile.mkdtemp(prefix="assistant-index-", dir=place))
            atexit.register(shutil.rmtree, target, True)
            copy = target / folder.name
            shutil.copytree(folder, copy, copy_function=shutil.copyfile)
            for item in [copy, *copy.rglob("*")]:  # the copy is ours to write, whatever the home's modes
                item.chmod(0o700 if item.is_dir() else 0o600)
            return copy
        except OSError as error:
            last = error
    raise last or OSError(errno.ENOSPC, f"no temporary folder has {size >> 20} MB free for a copy of the index")


def space_needed(index_root: Path) -> str:
    """What a sync needs free and what is free, e.g. 'a sync needs about 12 MB free there (0 MB now)'."""
    need = max(folder_size(index_root), 1 << 20)
    free = free_bytes(index_root)
    if free is None:
        return f"a sync needs about {mb(need)} free there"
    return f"a sync needs about {mb(need)} free there ({mb(free)} now)"


def mb(size: int) -> str:
    return f"{size / (1 << 20):.0f} MB"

"""One home, one knowledge: a server says in its home what it serves, and a sync elsewhere respects it.

`assistant serve` writes `<home>/serving.json` (its pid, the start time of that process and the
knowledge it follows) once the index is loaded, and removes it when it stops (Ctrl-C, SIGTERM, any
exit short of a kill). A sync in another
process (another `serve`, `ask` or `index` naming other knowledge) reads it first: while that
server is alive - the pid exists and started when the file says, so a reused pid does not count -
and serves other knowledge, the sync refuses in one line instead of changing the index under it.
A marker left by a server that died is ignored (and replaced by the next server). A home that
cannot be written gets no marker; its index cannot be synced either.

The marker also gives the server's address and a token made for this run (the file is readable by
its owner only): `assistant ask` on the same home sends its question there (`ASK_ROUTE`) with the
token, which proves to the server that the caller can read this home, instead of loading the index
itself (`assistant.cli.running_server`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from assistant.errors import SettingsError

MARKER = "serving.json"
ASK_ROUTE = "/assistant/ask"  # where a server answers `assistant ask` for callers holding its token


def process_start(pid: int) -> str | None:
    """When the process started (clock ticks since boot, Linux /proc), or None when it does not run."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return ""
        return ""  # alive, start time unknown (no /proc)
    return stat.rpartition(")")[2].split()[19]


def knowledge_key(paths: Iterable[Path | str]) -> list[str]:
    return sorted(str(Path(p).expanduser().resolve()) for p in paths)


def mark_serving(
    home: Path, knowledge: Iterable[Path | str], *, url: str | None = None, token: str | None = None
) -> Path | None:
    """Say in `home` that this process serves `knowledge` (at `url`, answering `ASK_ROUTE` for callers
    that send `token`); None when the home cannot be written."""
    path = Path(home) / MARKER
    record = {"pid": os.getpid(), "started": process_start(os.getpid()), "knowledge": knowledge_key(knowledge)}
    if url and token:
        record |= {"url": url, "token": token}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # the token: owner only
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        temporary.replace(path)
    except OSError:
        return None
    atexit.register(unmark_serving, Path(home))  # however the process ends short of a kill
    return path


def unmark_serving(home: Path) -> None:
    """Remove this process's marker (not another server's)."""
    path = Path(home) / MARKER
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def live_server(home: Path) -> dict | None:
    """The marker of another live process serving `home`, or None."""
    try:
        record = json.loads((Path(home) / MARKER).read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid == os.getpid():
        return None
    started = process_start(pid)
    if started is None or (started and record.get("started") and started != record["started"]):
        return None  # gone, or the pid now belongs to another process
    return record


def check_not_served_otherwise(home: Path, knowledge: Iterable[Path | str]) -> None:
    """Raise a one-line SettingsError when another live process serves `home` with other knowledge."""
    record = live_server(home)
    if record is None:
        return
    theirs = record.get("knowledge") or []
    if sorted(theirs) == knowledge_key(knowledge):
        return
    raise SettingsError(
        f"{home} is being served by process {record['pid']} with other knowledge ({':'.join(theirs)}) - "
        "set ASSISTANT_HOME to another folder for this knowledge, or stop that server first"
    )

"""`assistant doctor`: check an index home, say what is wrong and the one command that fixes it.

It only reads: the manifest, the entries and lexical files of the committed generation, leftover
files of other generations, Chroma (every id of the collection, compared with the committed
chunks, and a few searches by stored vectors), and the knowledge the home follows, read as a sync
reads it, so that a file a sync skips (a protected PDF, a link out of the folder) is named with its
reason: the index is not healthy while a file is left out. The knowledge is never changed, by the
checks or by the fixes they name. Chroma is read in a child process: its HNSW reader can crash the
process (SIGSEGV) on a damaged file, and that crash is itself the diagnosis.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import IndexUnavailableError
from assistant.index.chroma_index import Index
from assistant.index.lock import LOCK_NAME, holder
from assistant.index.serving import knowledge_key, live_server
from assistant.index.store import IndexDamagedError
from assistant.redaction import redact
from assistant.settings import Settings

SYNC = "assistant index"
REBUILD = "assistant index --rebuild"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None  # the command that repairs a failed check

    def __str__(self) -> str:
        return f"{'ok' if self.ok else 'problem'}: {self.name}: {self.detail}"


MAX_LISTED = 20  # skipped files and notes named one a line; the rest are counted


def diagnose(settings: Settings) -> list[Check]:
    """Every check of the index, in order (a failed check that makes the later ones meaningless ends
    them), then a line for each knowledge file a sync skips or reads only in part."""
    return [*index_checks(settings), *knowledge_checks(settings)]


def knowledge_checks(settings: Settings) -> list[Check]:
    """A failed check for each knowledge file a sync skips, with its reason; an ok line for each read
    only in part (a note: pages without text, a section cut at a bound)."""
    from assistant.knowledge.corpus import load_corpus

    corpus = load_corpus(settings.knowledge, follow_links=settings.follow_links)
    checks = [Check("skipped", False, str(problem)) for problem in corpus.problems[:MAX_LISTED]]
    if len(corpus.problems) > MAX_LISTED:
        more = len(corpus.problems) - MAX_LISTED
        checks.append(Check("skipped", False, f"and {more} more: `{SYNC}` lists them all"))
    checks += [Check("read in part", True, note) for note in corpus.notes[:MAX_LISTED]]
    if len(corpus.notes) > MAX_LISTED:
        checks.append(Check("read in part", True, f"and {len(corpus.notes) - MAX_LISTED} more"))
    return checks


def index_checks(settings: Settings) -> list[Check]:
    """The checks of the index home and Chroma."""
    checks: list[Check] = []
    root = Path(settings.home) / "index"
    running = holder(root / LOCK_NAME)
    if running:
        checks.append(Check("sync", True, f"a sync is running ({running}); what follows may change when it ends"))
    server = live_server(Path(settings.home))
    if server is not None:
        theirs = server.get("knowledge") or []
        same = sorted(theirs) == knowledge_key(settings.knowledge)
        detail = f"process {server['pid']} serves this home with {'this' if same else 'other'} knowledge"
        checks.append(Check("server", same, detail + ("" if same else f" ({':'.join(theirs)})")))
    index = Index(settings)  # reads the committed state; damage is kept in index.mismatch, not raised
    try:
        manifest = index.store.manifest()
    except IndexDamagedError as error:
        return [*checks, Check("manifest", False, str(error), REBUILD)]
    except IndexUnavailableError as error:  # a server that cannot be reached: starting it is the fix
        return [*checks, Check("chroma" if settings.chroma_url else "manifest", False, str(error), None)]
    where = "on the Chroma server" if settings.chroma_url else f"in {root}"
    if manifest is None:
        return [*checks, Check("manifest", False, f"no index {where} yet", SYNC)]
    if index.mismatch is not None:
        return [*checks, Check("committed generation", False, str(index.mismatch), REBUILD)]
    if not index.entries:
        knowledge = " ".join(shlex.quote(Path(p).as_posix()) for p in settings.knowledge)
        return [
            *checks,
            Check("entries", False, "the index holds no entries: nothing can be answered", f"{SYNC} {knowledge}"),
        ]
    checks.append(
        Check(
            "committed generation",
            True,
            f"generation {index.generation}: {len(index.entries)} entries, {len(index.chunks)} chunks",
        )
    )
    keep = {f"entries-{index.generation}.jsonl", f"lexical-{index.generation}"}
    leftovers = sorted(  # a server's leftovers (records of other commits) are swept by every sync
        p.name
        for p in (root.iterdir() if not settings.chroma_url else ())
        if (p.name.startswith(("entries-", "lexical-")) or p.name.endswith(".tmp")) and p.name not in keep
    )
    if leftovers:
        checks.append(Check("old generation files", False, f"{len(leftovers)} left: {', '.join(leftovers[:4])}", SYNC))
    try:
        index.lexical("the index", 1)
    except IndexUnavailableError as error:
        checks.append(Check("lexical index", False, str(error), REBUILD))
    if not settings.chroma_url and not index.chroma_path.exists():
        checks.append(Check("chroma", False, f"{index.chroma_path} is missing: no vectors at all", SYNC))
        return checks
    health = vector_health_in_child(settings)
    if "error" in health:
        return [*checks, Check("chroma", False, health["error"], None if settings.chroma_url else REBUILD)]
    committed, missing, orphans, lost = health["health"]
    if missing:
        checks.append(Check("chroma", False, f"{missing} of {committed} committed vectors are missing", SYNC))
    if orphans:
        checks.append(Check("chroma", False, f"{orphans} vectors that no committed chunk names (orphans)", SYNC))
    if lost:
        checks.append(Check("chroma", False, f"its vector index does not find {lost} sampled vectors", REBUILD))
    if not missing and not orphans and not lost:
        checks.append(Check("chroma", True, f"all {committed} committed vectors present, no orphans"))
    return checks


def vector_health_in_child(settings: Settings) -> dict:
    """`Index.vector_health()` run by a child process: {"health": [...]} or {"error": "one line"}."""
    fields = {
        "home": str(settings.home),
        "embeddings": settings.embeddings,
        "chroma_url": settings.chroma_url,
        "chunk_tokens": settings.chunk_tokens,
        "chunk_overlap_sentences": settings.chunk_overlap_sentences,
    }
    package_root = str(Path(__file__).resolve().parents[2])  # the folder that holds `assistant/`
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run(
        [sys.executable, "-m", "assistant.cli.doctor"],
        input=json.dumps(fields),  # on stdin: a server URL may carry a password
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        where = Path(settings.home) / "index" / "chroma"
        return {"error": f"Chroma crashed ({name}) reading {where}: its files are damaged - {REBUILD}"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"the Chroma check failed ({redact(last[:160], settings.chroma_url)})"}
    return json.loads(lines[-1])


def _child() -> int:
    fields = json.loads(sys.stdin.read())
    settings = Settings(**{**fields, "home": Path(fields["home"])})
    try:
        print(json.dumps({"health": list(Index(settings).vector_health())}))
    except IndexUnavailableError as error:
        print(json.dumps({"error": str(error)}))
    return 0


def the_fix(checks: list[Check]) -> str | None:
    """The one command that repairs every failed check (a rebuild covers a sync), or None."""
    fixes = {check.fix for check in checks if not check.ok}
    if REBUILD in fixes:
        return REBUILD
    if SYNC in fixes:
        return SYNC
    return next((fix for fix in fixes if fix), None)


if __name__ == "__main__":
    sys.exit(_child())

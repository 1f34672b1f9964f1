"""Replicas on a Chroma server, for `assistant bench`: a replica's start time against a synced server,
and search at scale through a replica whose home starts empty.

A `chroma run` server is started on 127.0.0.1 in a temporary folder; the corpus is synced into it
by the real `Index.sync`; then, each in a fresh child process (so each reports its own memory):

- `start`: what `assistant serve --no-sync` does before it is ready, with an empty home: read the
  committed entries from the server, build the lexical index (and cache it), load the encoder and
  answer a first search; then the same again with the cache in place. The resident memory the
  lexical index adds is measured around its build;
- scale: the server's index grown with synthetic vectors (`assistant.bench.scale.grow`), then a
  replica with an empty home starts and is searched (`search_latency`).

`python -m assistant.bench.replica --chunks 100000,1000000` runs the scale points by hand (growing the
server to 1,000,000 chunks took 80 minutes here, the replica's starts and searches at that size 12 more;
`assistant bench` stops at 100,000).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assistant.bench.measure import disk_bytes, knowledge_root, peak_rss_mb, rss_mb
from assistant.offline import offline_env

RESULT = "RESULT "
CHROMA = Path(sys.executable).with_name("chroma")


@contextmanager
def chroma_server(data: Path) -> Any:
    """`chroma run` over `data` on a free port of 127.0.0.1; yields its URL, stops it on exit."""
    import socket
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (data.parent / f"{data.name}.log").open("wb")
    proc = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chroma run did not start (see {log.name})") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
        log.close()


def replica_start(home: Path, url: str, embeddings: str, question: str) -> dict[str, Any]:
    """Time a replica's start against the server (home as it is: empty, or with its cache)."""
    from assistant.assistant import Assistant
    from assistant.settings import Settings

    settings = Settings(home=home, embeddings=embeddings, model="extractive", chroma_url=url, sync_at_start=False)
    started = time.perf_counter()
    bot = Assistant(settings, auto_index=False)
    open_s = time.perf_counter() - started
    before = rss_mb()
    t0 = time.perf_counter()
    bot.retriever.index.lexical("warm up", 1)
    lexical_s = time.perf_counter() - t0
    lexical_mb = rss_mb() - before
    t0 = time.perf_counter()
    bot.load()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bot.search(question)
    first_ms = (time.perf_counter() - t0) * 1000
    return {
        "entries": len(bot.retriever.index.entries),
        "chunks": len(bot.retriever.index.chunks),
        "open_s": round(open_s, 3),  # the manifest and every entry record, read from the server
        "lexical_s": round(lexical_s, 3),
        "lexical_rss_mb": round(lexical_mb, 1),
        "load_s": round(load_s, 3),  # encoder, model, a first retrieval
        "ready_s": round(time.perf_counter() - started - first_ms / 1000, 3),
        "first_search_ms": round(first_ms, 1),
        "cache_bytes": disk_bytes(home / "index" / "cache"),
    }


def child(config: dict[str, Any], module: str = "assistant.bench.replica", timeout: float = 7200) -> dict[str, Any]:
    """Run `module` (this one, or assistant.bench.scale) in a fresh process; its RESULT line as a dict."""
    marker = ["--child"] if module == "assistant.bench.replica" else []
    done = subprocess.run(
        [sys.executable, "-m", module, *marker, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=offline_env(),
    )
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(RESULT)), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"bench child {config.get('action')} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(line.removeprefix(RESULT))


def measure_replicas(
    corpus: Path,
    embeddings: str,
    questions: list[str],
    points: tuple[int, ...],
    say: Callable[[str], None],
    warm: int = 5,
) -> dict[str, Any]:
    """The figures of this module, on a temporary server; `points` are the scale targets (chunks)."""
    from assistant.index.chroma_index import Index
    from assistant.settings import Settings

    out: dict[str, Any] = {"corpus": corpus.name, "embeddings": embeddings, "starts": [], "scale": []}
    with tempfile.TemporaryDirectory(prefix="assistant-bench-replica-") as tmp:
        temp = Path(tmp)
        with chroma_server(temp / "chroma") as url:
            writer = Settings(home=temp / "writer", knowledge=(corpus,), embeddings=embeddings, chroma_url=url)
            t0 = time.perf_counter()
            report = Index(writer).sync(progress=False)
            out["sync_s"] = round(time.perf_counter() - t0, 1)
            say(f"  synced {report.entries:,} entries ({report.chunks:,} chunks) into the server in {out['sync_s']} s")
            start = {"action": "start", "url": url, "embeddings": embeddings, "question": questions[0]}
            for step, target in enumerate((0, *points)):
                if target:
                    grown = child(
                        {
                            "action": "grow",
                            "home": str(temp / "writer"),
                            "knowledge": [str(corpus)],
                            "embeddings": embeddings,
                            "target": target,
                            "seed": target,
                            "chroma_url": url,
                        },
                        module="assistant.bench.scale",
                    )
                    say(f"  grew the server's index to {grown['chunks']:,} chunks in {grown['seconds']:.0f} s")
                    out["scale"].append({"chunks": grown["chunks"], "grow_s": grown["seconds"], "grown": grown})
                for cache in ("empty home", "cached"):
                    home = temp / f"replica-{step}"
                    figures = {"home": cache, **child({**start, "home": str(home)})}
                    out["starts"].append(figures)
                    say(
                        f"  replica start at {figures['chunks']:,} chunks ({cache}): "
                        f"ready in {figures['ready_s']:.1f} s "
                        f"(records {figures['open_s']:.1f} s, lexical {figures['lexical_s']:.1f} s / "
                        f"{figures['lexical_rss_mb']:.0f} MB, encoder and first retrieval {figures['load_s']:.1f} s), "
                        f"peak RSS {figures['peak_rss_mb']:.0f} MB"
                    )
                if target:
                    searched = child(
                        {
                            "action": "search",
                            "home": str(temp / f"replica-{step}"),  # started once: its cache is there
                            "knowledge": [str(corpus)],
                            "embeddings": embeddings,
                            "questions": questions,
                            "warm": warm,
                            "chroma_url": url,
                        },
                        module="assistant.bench.scale",
                    )
                    searched.pop("profile", None)
                    out["scale"][-1].update(searched)
                    parts = searched["parts_ms"]
                    say(
                        f"  search p50 {searched['search_ms']['p50']:.1f} ms, "
                        f"p95 {searched['search_ms']['p95']:.1f} ms "
                        f"(Chroma p50 {parts['chroma_query']['p50']:.1f} ms, BM25 {parts['bm25s']['p50']:.1f} ms); "
                        f"peak RSS {searched['peak_rss_mb']:.0f} MB"
                    )
            out["server_bytes"] = disk_bytes(temp / "chroma")
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        config = json.loads(argv[1])
        result = replica_start(Path(config["home"]), config["url"], config["embeddings"], config["question"])
        result["peak_rss_mb"] = peak_rss_mb()
        print(RESULT + json.dumps(result), flush=True)
        return 0
    from assistant.bench.queries import load_questions

    parser = argparse.ArgumentParser(prog="python -m assistant.bench.replica", description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="100000", help="scale points, comma-separated (default 100000)")
    parser.add_argument("--corpus", default="mlsys", help="the knowledge folder under knowledge/ (default mlsys)")
    parser.add_argument("--embeddings", default="local", help="the encoder (default local)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    knowledge = knowledge_root()
    questions = load_questions(knowledge / "questions" / f"{args.corpus}.jsonl", None)
    points = tuple(int(x) for x in args.chunks.split(",") if x)
    figures = measure_replicas(knowledge / args.corpus, args.embeddings, questions, points, print)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

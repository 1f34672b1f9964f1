"""Small pure helpers for `assistant bench`: percentiles, sizes, memory, profiles, tables."""

from __future__ import annotations

import cProfile
import io
import math
import os
import pstats
import re
import resource
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(values: Sequence[float], digits: int = 1) -> dict[str, float]:
    """n, p50, p95, mean, min and max of a list of timings."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "mean": round(sum(values) / len(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def ratio(a: float | None, b: float | None, digits: int = 3) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, digits)


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


def number(value: Any, digits: int = 1) -> str:
    """A table cell: thousands separators, fixed decimals, an en dash for a missing value."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 1) -> str:
    """A Markdown table; numbers right-aligned, text left-aligned."""
    cells = [[number(v, digits) for v in row] for row in rows]
    numeric = [
        all(row[i] is None or (isinstance(row[i], int | float) and not isinstance(row[i], bool)) for row in rows)
        if rows
        else False
        for i in range(len(headers))
    ]
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---:" if n else "---" for n in numeric) + " |",
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    return "\n".join(lines)

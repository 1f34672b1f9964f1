"""Numbers into figures, shared by the evaluation and the benchmarks: percentiles and Markdown tables."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100), interpolating linearly between ranks as numpy does; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, got {q}")
    data = sorted(values)
    if not data:
        return None
    position = (len(data) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (position - low)


def summarise(values: Sequence[float], digits: int = 1) -> dict[str, float]:
    """n, p50, p95, mean, min and max of a list of timings (just n when there are none)."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50) or 0.0, digits),
        "p95": round(percentile(values, 95) or 0.0, digits),
        "mean": round(sum(values) / len(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def ratio(a: float | None, b: float | None, digits: int = 3) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, digits)


def cell(value: Any, digits: int = 1) -> str:
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


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 1) -> str:
    """A Markdown table; columns of numbers (or missing values) right-aligned, text left-aligned."""
    numeric = [bool(rows) and all(row[i] is None or is_number(row[i]) for row in rows) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---:" if n else "---" for n in numeric) + " |",
    ]
    lines += ["| " + " | ".join(cell(v, digits).replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines)

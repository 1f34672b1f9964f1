#!/usr/bin/env python3
"""Print how the `assistant` package's stages import each other, and check the layering.

    python3 scripts/import_layers.py            # the stage graph and every module's imports
    python3 scripts/import_layers.py --check    # exit 1 on a cycle or an upward import

Reads the source with `ast` (nothing is imported or run). A stage is a subpackage of `assistant`
(`knowledge`, `index`, ...) or one of its flat modules. An *upward* import is a module importing the
package it lives in (`assistant.index.sync` importing `assistant.index.chroma_index` or `assistant`), which ties a
part to the whole; a *cycle* is two stages that import each other, directly or around a loop.
Imports made only for type checking are left out: they do not run.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "assistant"
TOOLS = {"eval", "bench"}  # tools, not runtime: they may import any stage


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(tree: ast.Module, modules: set[str]) -> list[str]:
    """The modules that absolute `assistant...` imports outside `if TYPE_CHECKING:` blocks load.

    `from assistant.eval import metrics` loads the module `assistant.eval.metrics`; `from
    assistant.index.store import Store` loads `assistant.index.store`.
    """
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "assistant":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.append(submodule if submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.split(".")[0] == "assistant")
    return found


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "assistant"


def graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    stages: dict[str, set[str]] = defaultdict(set)
    upward = []
    for name, path in modules.items():
        own = stage_of(name)
        stages[own]
        for target in runtime_imports(ast.parse(path.read_text(encoding="utf-8")), set(modules)):
            if target not in modules:
                continue
            if name.startswith(target + ".") and path.name != "__init__.py":
                upward.append(f"{name} imports {target}")
            other = stage_of(target)
            if other != own and other != "assistant":
                stages[own].add(other)
    return stages, upward


def cycles(stages: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(stages.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(stages):
        if start not in state:
            visit(start, [start])
    return found


def report() -> tuple[list[str], list[str]]:
    """The printed lines (the stage graph, the problems, the verdict) and the problems alone.

    docs/architecture.md holds a copy of the lines; tests/test_docs.py fails when they differ.
    """
    stages, upward = graph()
    runtime = {s: d - TOOLS for s, d in stages.items() if s not in TOOLS}
    lines = [
        f"{stage:>12} -> {', '.join(sorted(stages[stage])) or '(nothing)'}"
        for stage in sorted(stages, key=lambda s: (s in TOOLS, len(stages[s]), s))
    ]
    problems = [f"upward import: {u}" for u in upward]
    problems += ["cycle: " + " -> ".join(c) for c in cycles(runtime)]
    lines += problems
    lines.append("no cycles, no upward imports" if not problems else f"{len(problems)} problem(s)")
    return lines, problems


def main() -> int:
    lines, problems = report()
    print("\n".join(lines))
    return 1 if problems and "--check" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())

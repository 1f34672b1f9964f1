"""The project's scripts as modules, for tests that call their functions (scripts/ is not a package)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import ModuleType

from tests.conftest import REPO


@functools.cache
def load_script(name: str) -> ModuleType:
    """`scripts/<name>.py`, imported once per test process."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module

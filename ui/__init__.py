"""The Gradio chat UI: a thin layer over `assistant.Assistant`.

`build_app(assistant)` returns the `gr.Blocks`; `serve(settings, host, port)` creates the
Assistant, builds the app and launches it. Both live in `ui.app` and are imported lazily here,
so `import ui.render` (pure helpers, used by tests) does not import Gradio.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_app", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ui import app

        return getattr(app, name)
    raise AttributeError(f"module 'ui' has no attribute {name!r}")

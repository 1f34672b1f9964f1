"""Text from entries and models made safe to print: no escape sequences may drive the terminal."""

from __future__ import annotations

import json
import re

# What `ask` and `chat` print comes from entries and from the model: neither may drive the terminal
# (clear the screen, set the window title, write the clipboard with OSC 52, hide text with \r).
_TERMINAL_SEQUENCES = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: title, clipboard, hyperlinks
    r"|(?:\x1b[P^_X]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, clearing
    r"|\x1b[ -/]*[0-~]?"  # any other escape
)
# C0 controls but tab and newline, DEL, C1 controls, and bidirectional overrides that reorder text
_RAW_IN_JSON = [*range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # json.dumps leaves these
_TERMINAL_CONTROLS = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), *_RAW_IN_JSON])  # str.translate: gone
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _RAW_IN_JSON}


def terminal_text(text: str) -> str:
    """`text` safe to print to a terminal: escape sequences and control characters removed, newlines kept."""
    text = text.replace("\r\n", "\n")
    return _TERMINAL_SEQUENCES.sub("", text).translate(_TERMINAL_CONTROLS)


def terminal_json(value: object) -> str:
    """JSON with every control character escaped as \\uXXXX (json.dumps leaves DEL and C1 raw)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.translate(_JSON_ESCAPES)

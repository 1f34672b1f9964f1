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
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # json.dumps leaves these


def terminal_text(text: str) -> str:
    """`text` safe to print to a terminal: escape sequences and control characters removed, newlines kept."""
    text = text.replace("\r\n", "\n")
    return _TERMINAL_CONTROLS.sub("", _TERMINAL_SEQUENCES.sub("", text))


def terminal_json(value: object) -> str:
    """JSON with every control character escaped as \\uXXXX (json.dumps leaves DEL and C1 raw)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

"""The public contract: names, prompts, settings and the CLI's edges."""

from __future__ import annotations

import ast
import string
import subprocess
import sys
from pathlib import Path

import pytest

import assistant
from assistant.answer.prompts import available, load_prompt
from assistant.cli.commands import main
from assistant.settings import Settings
from tests.conftest import REPO

PLACEHOLDERS = {
    "answer_system": set(),
    "answer_user": {"context", "question", "refusal"},
    "condense": {"history", "question"},
    "refusal": set(),
    "refusal_suggestions": {"reason", "suggestions"},
    "refusal_suggestions_documents": {"reason", "suggestions"},
    "judge": {"question", "facts", "answer"},
    "describe": {"per_entry", "entries"},
}


def test_public_names_are_pinned() -> None:
    assert assistant.__all__ == [
        "Answer",
        "Assistant",
        "AssistantError",
        "Block",
        "Citation",
        "Entry",
        "KnowledgeStatus",
        "SentenceEncoders",
        "Settings",
        "SettingsError",
        "Source",
        "StreamCutOffError",
        "ask",
        "find_markers",
        "plain_math",
        "segments",
    ]
    for name in assistant.__all__:
        assert getattr(assistant, name) is not None


# what the chat UI may still take from inside the package: serving markers, the stopword list its example
# questions use, and log redaction; everything else comes through the public names above
UI_INTERNALS = {"assistant.index.serving", "assistant.redaction", "assistant.text"}


def test_the_ui_depends_on_the_public_names() -> None:
    internal = set()
    for path in (REPO / "ui").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("assistant."):
                internal.add(node.module)
            if isinstance(node, ast.Import):
                internal |= {a.name for a in node.names if a.name.startswith("assistant.")}
    assert internal <= UI_INTERNALS, sorted(internal - UI_INTERNALS)


def test_import_is_cheap_and_does_nothing() -> None:
    code = (
        "import sys, assistant; print(sorted(m for m in ('chromadb', 'torch', 'langchain_core') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(PLACEHOLDERS))
def test_each_prompt_formats_with_its_placeholders(name: str) -> None:
    text = load_prompt(name)
    fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
    assert fields == PLACEHOLDERS[name]
    rendered = text.format(**{f: f"<{f}>" for f in fields})
    assert "{" not in rendered.replace("{{", "")


def test_every_prompt_file_is_known() -> None:
    assert set(available()) == set(PLACEHOLDERS)


def test_settings_from_env() -> None:
    env = {
        "ASSISTANT_HOME": "/tmp/x",
        "ASSISTANT_KNOWLEDGE": "a:b/c",
        "ASSISTANT_MODEL": "stub",
        "ASSISTANT_CHROMA_URL": "http://127.0.0.1:8000",
        "OPENAI_API_KEY": "sk-secret",
    }
    settings = Settings.from_env(env)
    assert settings.home == Path("/tmp/x")
    assert settings.knowledge == (Path("a"), Path("b/c"))
    assert settings.resolved_model == "stub"
    assert settings.chroma_url == "http://127.0.0.1:8000"
    assert "sk-secret" not in repr(settings)
    assert Settings.from_env({}).resolved_model == "extractive"
    assert Settings.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}).resolved_model.startswith("openai:")


def test_bad_setting_is_a_one_line_cli_error(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("ASSISTANT_RETRIEVAL", "psychic")
    assert main(["ask", "What is a GPU?"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hybrid" in err and "Traceback" not in err


def test_cli_ask_json_and_empty_question(seed_settings, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("ASSISTANT_HOME", str(seed_settings.home))
    monkeypatch.setenv("ASSISTANT_MODEL", "extractive")
    assert main(["ask", "--json", "What is a GPU?"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["citations"][0]["entry_id"] == "MLD-0472"
    assert main(["ask", "   "]) == 1
    assert "empty" in capsys.readouterr().err


def test_cli_index_reports_counts(seed_settings, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("ASSISTANT_HOME", str(seed_settings.home))
    assert main(["index", str(seed_settings.knowledge[0])]) == 0
    out = capsys.readouterr().out
    assert "60 entries" in out and "0 added" in out and "60 unchanged" in out


def test_load_warms_what_the_first_question_would_wait_for(seed_settings) -> None:
    from assistant import Assistant
    from assistant.text import encoding

    bot = Assistant(seed_settings, auto_index=False)
    encoding.cache_clear()
    bot.load()
    assert encoding.cache_info().currsize == 1  # the token table a long context is counted with
    assert bot.ask("What is a GPU?").citations

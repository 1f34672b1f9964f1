"""A reply's length bounded on both sides, against servers that honour different limits.

The server is tests/fake_openai.py: it can play a server that honours only `max_tokens` (as
llama-cpp-python's does), one that rejects `max_tokens` (OpenAI's reasoning models), and a model
stuck in a loop, on demand. tests/test_real_llm.py runs the same paths against a real model.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from assistant import Assistant, Settings
from assistant.answer.models import token_fields
from assistant.answer.models.calls import REPEATING_NOTE
from assistant.answer.models.repetition import is_looping
from assistant.cli.commands import main
from assistant.errors import ModelError, SettingsError
from tests.conftest import REPO, SEED
from tests.fake_openai import FakeOpenAI, Loop, Ramble, RejectsMaxTokens, Reply

QUESTION = "What is a GPU?"
GOOD = "A GPU is a processor designed for highly parallel workloads, widely used for tensor computation [MLD-0472]."


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=Reply(GOOD)) as server:
        yield server


def on(seed_settings: Settings, fake: FakeOpenAI, **changes) -> Settings:
    base = dict(model="openai:test", openai_base_url=fake.base_url, max_retries=0, answer_deadline=20.0)
    return seed_settings.with_(**{**base, **changes})


def wait_for(condition, seconds: float = 5.0) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# --- which limit is sent ---------------------------------------------------------------------------


def test_openai_gets_max_completion_tokens_and_other_servers_both_names():
    assert token_fields(Settings(openai_api_key="k", max_tokens=300)) == {"max_completion_tokens": 300}
    azure = Settings(openai_base_url="https://team.openai.azure.com/openai/v1", max_tokens=300)
    assert token_fields(azure) == {"max_completion_tokens": 300}
    local = Settings(openai_base_url="http://127.0.0.1:8080/v1", max_tokens=300)
    assert token_fields(local) == {"max_completion_tokens": 300, "extra_body": {"max_tokens": 300}}
    assert token_fields(local.with_(token_param="max_tokens")) == {"extra_body": {"max_tokens": 300}}
    assert token_fields(local.with_(token_param="max_completion_tokens")) == {"max_completion_tokens": 300}


def test_the_setting_is_read_and_checked():
    assert Settings.from_env({"ASSISTANT_TOKEN_PARAM": "max_tokens"}).token_param == "max_tokens"
    assert Settings.from_env({}).token_param == "auto"
    with pytest.raises(SettingsError, match="ASSISTANT_TOKEN_PARAM='n_predict' is not known - use one of auto"):
        Settings.from_env({"ASSISTANT_TOKEN_PARAM": "n_predict"})


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"max_tokens": 120, "max_completion_tokens": 120}),
        ("max_tokens", {"max_tokens": 120}),
        ("max_completion_tokens", {"max_completion_tokens": 120}),
    ],
)
def test_the_server_receives_the_chosen_names(seed_settings, fake, choice, sent):
    Assistant(on(seed_settings, fake, max_tokens=120, token_param=choice)).ask(QUESTION)
    assert fake.token_params == [sent]


# --- a server that honours only max_tokens -----------------------------------------------------------


def test_a_server_that_ignores_max_completion_tokens_is_bounded_by_max_tokens(seed_settings, fake):
    fake.script(Ramble(honours=("max_tokens",)))
    # the reply shown as it is (the extractive fallback off), so its length can be read
    answer = Assistant(on(seed_settings, fake, max_tokens=50, extractive_fallback=False)).ask(QUESTION)
    assert "step50" in answer.text and "step51" not in answer.text
    assert any("50-token limit (ASSISTANT_MAX_TOKENS)" in note for note in answer.notes)
    assert not any(c.supported for c in answer.citations)
    assert "No claim in this answer is backed by a verified citation." in answer.notes


def test_without_max_tokens_such_a_server_is_still_cut_at_the_read_cap(seed_settings, fake):
    """What happened before: the server generates to the context's end; the reader stops at its cap
    and hangs up, so the server (which writes into a closed connection) stops too."""
    settings = on(seed_settings, fake, max_tokens=50, token_param="max_completion_tokens")
    fake.script(Ramble(honours=("max_tokens",), tokens=20_000))
    answer = Assistant(settings).ask(QUESTION)
    assert len(answer.text) <= settings.max_reply_chars
    assert any("passed 2,000 characters; it was cut there" in note for note in answer.notes)
    assert wait_for(lambda: fake.hangups == 1), "the server was never told the client had gone"


def test_a_server_that_rejects_max_tokens_gets_one_line_naming_the_setting(seed_settings, fake, monkeypatch, capsys):
    fake.script(RejectsMaxTokens())
    with pytest.raises(
        ModelError,
        match=r"rejected the request \(400: Unsupported parameter: 'max_tokens'.*"
        r"set ASSISTANT_TOKEN_PARAM",
    ):
        Assistant(on(seed_settings, fake)).ask(QUESTION)
    fake.script(RejectsMaxTokens())
    answer = Assistant(on(seed_settings, fake, token_param="max_completion_tokens")).ask(QUESTION)
    assert answer.citations[0].entry_id == "MLD-0472" and answer.citations[0].supported


# --- a model stuck in a loop --------------------------------------------------------------------------


def test_a_looping_reply_stops_early_with_a_note(seed_settings, fake):
    fake.script(Loop("Question: What is a GPU? machine\n", times=2000, every=0.01))
    bot = Assistant(on(seed_settings, fake, extractive_fallback=False))  # the looping text shown as cut
    bot.search(QUESTION)  # warm: the index and the encoder loaded
    started = time.monotonic()
    answer = bot.ask(QUESTION)
    assert time.monotonic() - started < 5.0, "the 20 s the loop takes was waited for"
    assert REPEATING_NOTE in answer.notes
    assert answer.text.count("machine") <= 3
    assert not answer.citations and "No claim in this answer is backed by a verified citation." in answer.notes
    assert wait_for(lambda: fake.hangups == 1), "the connection was left open"


def test_a_phrase_loop_within_one_line_is_stopped_and_the_cli_says_so(seed_settings, fake, monkeypatch, capsys):
    settings = on(seed_settings, fake)
    for name, value in {
        "ASSISTANT_HOME": str(settings.home),
        "ASSISTANT_KNOWLEDGE": str(SEED),
        "ASSISTANT_MODEL": settings.model,
        "OPENAI_BASE_URL": fake.base_url,
    }.items():
        monkeypatch.setenv(name, value)
    fake.script(Loop("the GPU is the GPU is ", times=3000))
    assert main(["ask", QUESTION]) == 0
    out, err = capsys.readouterr()
    assert "began repeating itself" in out and len(out) < 2000, out[:300]
    assert "Traceback" not in err


def test_the_knowledge_and_answers_that_repeat_on_purpose_are_not_loops():
    """Every concept page and every glossary and abstract record, read as if a model had written it."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "knowledge").rglob("*.txt"))]
    for records in sorted((REPO / "knowledge" / "mlsys").rglob("*.jsonl")):
        texts += records.read_text(encoding="utf-8").splitlines()
    assert len(texts) > 2000, len(texts)
    assert not [text[:80] for text in texts if is_looping(text)]
    cited = " ".join(["A GPU runs many threads [MLD-0472]. It hides memory latency [MLD-0472, MLD-0001]."] * 2)
    assert not is_looping(cited)
    assert not is_looping("- step one\n- step two\n- step three\n" + "| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert is_looping("Question: What is a GPU? machine\n" * 3)
    assert is_looping("memory " * 24) and not is_looping("memory " * 23)
    sentence = "A GPU is a processor designed for highly parallel workloads [MLD-0472]. "
    assert is_looping(sentence * 5) and not is_looping(sentence * 4)

"""A real model in the loop: llama-cpp-python's OpenAI-compatible server with the shipped Gemma 3 270M.

One server per test session (assistant.answer.local_server, the same command as `make llm`), on a
free 127.0.0.1 port. Answers stream through `Assistant.ask`/`stream`, the CLI and the UI's `/chat`;
a small base model answers badly, so what is checked is that the product stays honest and bounded
with it: the reply length is bounded by the server (it honours `max_tokens`, not
`max_completion_tokens`), a loop or a long reply ends within the deadline with its note, invented
ids and unsupported claims are never shown as verified, and the server stops generating when the
reader hangs up. With CI=true these tests never skip: a server that cannot start fails them.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant import Answer, Assistant, Settings
from assistant.answer import local_server
from assistant.answer.models import make_chat_model, stream_reply
from assistant.answer.models.calls import REPEATING_NOTE
from assistant.cli.commands import main
from assistant.errors import AssistantError, ModelError
from assistant.verify.citations import find_markers
from tests.conftest import IN_CI, SEED
from tests.processes import free_port

pytestmark = [
    pytest.mark.server,
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),  # gradio's queue stats vs pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

DEADLINE = 90.0  # seconds for a whole answer (the default); each test checks its answer ended by then
# a small context: on 2 busy cores the model reads a prompt at ~40 tokens/s, so the default 1,800-token
# context alone would take most of a minute; what is tested here does not depend on its size
CONTEXT_TOKENS = 400
SLACK = 8.0  # retrieval on a loaded machine, the client's start
UNVERIFIED = "No claim in this answer is backed by a verified citation."


@pytest.fixture(scope="session")
def llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, server log) of the local model server, started once and stopped at the end."""
    missing = local_server.installed()
    if missing:
        if IN_CI:
            pytest.fail(f"CI runs the real-model tests, but {missing}")
        pytest.skip(f"no local model server: {missing}")
    log = tmp_path_factory.mktemp("llm") / "server.log"
    try:
        server = local_server.running(log)
        url, _ = server.__enter__()
    except AssistantError as error:
        pytest.fail(f"the local model server did not start: {error}")
    try:
        yield url, log
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def settings(seed_settings: Settings, llm: tuple[str, Path]) -> Settings:
    return seed_settings.with_(
        model="openai:gemma-3-270m",
        openai_base_url=llm[0],
        answer_deadline=DEADLINE,
        max_tokens=160,
        max_retries=0,
        context_tokens=CONTEXT_TOKENS,
    )


def warm(bot: Assistant) -> Assistant:
    bot.search("What is a GPU?")
    return bot


def honest(answer: Answer) -> None:
    """Nothing unverified is shown as verified: every marker left in the text is a verified citation."""
    verified = {c.entry_id for c in answer.citations if c.supported}
    shown = {i for _, _, ids in find_markers(answer.text) for i in ids}
    assert shown <= verified, (shown, answer.citations)
    for citation in answer.citations:
        if citation.supported:
            assert citation.quote, citation
    if not verified and not answer.refused:
        assert UNVERIFIED in answer.notes, answer.notes


def timed(bot: Assistant, question: str) -> tuple[list[str], Answer | None, float]:
    """The deltas, the Answer and the seconds taken; no Answer when the deadline ended the reply (on a
    busy machine the model may read the prompt slowly): then the error must say so, in one line."""
    started = time.monotonic()
    deltas: list[str] = []
    answer = None
    try:
        for part in bot.stream(question):
            if isinstance(part, Answer):
                answer = part
            else:
                deltas.append(part)
    except ModelError as error:
        assert "(ASSISTANT_ANSWER_DEADLINE)" in str(error) and "\n" not in str(error), error
    return deltas, answer, time.monotonic() - started


def server_log(llm: tuple[str, Path]) -> str:
    return llm[1].read_text(encoding="utf-8", errors="replace")


def wait_for(condition, seconds: float = 10.0) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


# --- the server bounds the reply by the limit it honours -------------------------------------------


def test_the_server_stops_at_max_tokens_which_it_honours(settings):
    """Asked for 12 tokens under both names (auto, a non-OpenAI URL), the server stops at 12."""
    chat = make_chat_model(settings.with_(max_tokens=12))
    reply = stream_reply(chat.model, [("human", "Count from one to two hundred: one, two, three,")])
    text = "".join(reply)
    if REPEATING_NOTE not in reply.notes:  # a loop seen within 12 tokens ends the read first
        assert reply.finish_reason == "length", (reply.finish_reason, text)
        assert any("12-token limit (ASSISTANT_MAX_TOKENS)" in note for note in reply.notes)
    assert 0 < len(text) < 12 * 16, text


def test_without_max_tokens_the_server_generates_on_and_the_reader_hangs_up(settings, llm):
    """What happened before: only max_completion_tokens sent, which this server ignores. The reader
    ends the reply at its loop check or deadline and closes the connection; the server notices and
    stops generating (its log says so) instead of going on to the context's end."""
    chat = make_chat_model(settings.with_(max_tokens=12, token_param="max_completion_tokens", answer_deadline=8.0))
    before = server_log(llm).count("Disconnected from client")
    started = time.monotonic()
    parts: list[str] = []
    reply = stream_reply(chat.model, [("human", "What is a GPU?")])
    with contextlib.suppress(ModelError):  # the deadline: StreamCutOffError
        parts.extend(reply)
    assert time.monotonic() - started < 8.0 + 2.0
    assert len("".join(parts)) > 12 * 6, "the server stopped at max_completion_tokens after all"
    assert REPEATING_NOTE in reply.notes or reply.finish_reason is None
    assert wait_for(lambda: server_log(llm).count("Disconnected from client") > before), server_log(llm)[-2000:]


# --- answers through every surface ------------------------------------------------------------------


def test_stream_yields_deltas_and_a_bounded_honest_answer(settings):
    bot = warm(Assistant(settings))
    deltas, answer, elapsed = timed(bot, "What is a GPU?")
    assert elapsed < DEADLINE + SLACK
    if answer is not None:
        assert len(deltas) >= 2, "the reply was not streamed"
        assert answer.model == "openai:gemma-3-270m"
        honest(answer)


def test_a_looping_reply_ends_early_with_its_note(settings):
    """The loop the issue saw ("Question: What is a GPU? machine", 198 lines) ends after a few lines."""
    bot = warm(Assistant(settings.with_(max_tokens=300)))
    deltas, answer, elapsed = timed(bot, "What is a GPU?")
    raw = "".join(deltas)
    assert elapsed < DEADLINE + SLACK
    if answer is None:
        return
    if REPEATING_NOTE in answer.notes:
        assert len(raw) < 1000, raw
    else:  # the model did not loop on this machine: it must then have ended by a limit or by itself
        assert len(raw) <= settings.max_reply_chars
    assert elapsed < DEADLINE + SLACK
    honest(answer)


def test_invented_ids_are_removed_and_never_verified(settings):
    bot = warm(Assistant(settings))
    question = "What is a GPU? Cite it as [MLD-9999] and [arxiv:2999.00001]."
    deltas, answer, elapsed = timed(bot, question)
    assert elapsed < DEADLINE + SLACK
    if answer is None:
        return
    assert "MLD-9999" not in answer.text and "2999.00001" not in answer.text
    assert not any(c.entry_id in ("MLD-9999", "arxiv:2999.00001") for c in answer.citations)
    if "MLD-9999" in "".join(deltas):
        assert any("not in the context: MLD-9999" in note for note in answer.notes), answer.notes
    honest(answer)


def test_the_cli_prints_a_bounded_answer_with_its_notes(settings, monkeypatch, capsys):
    for name, value in {
        "ASSISTANT_HOME": str(settings.home),
        "ASSISTANT_KNOWLEDGE": str(SEED),
        "ASSISTANT_MODEL": settings.model,
        "OPENAI_BASE_URL": str(settings.openai_base_url),
        "ASSISTANT_ANSWER_DEADLINE": f"{DEADLINE:g}",
        "ASSISTANT_MAX_TOKENS": "160",
    }.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    code = main(["ask", "What is a GPU?", "--json"])
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert elapsed < DEADLINE + SLACK + 10  # the CLI opens the index and loads the encoder first
    if code == 1:  # the default 1,800-token context read slowly on a busy machine: the deadline ended it
        assert err.count("\n") == 1 and "(ASSISTANT_ANSWER_DEADLINE)" in err, err
        return
    assert code == 0, err
    answer = json.loads(out)
    verified = {c["entry_id"] for c in answer["citations"] if c["supported"]}
    shown = {i for _, _, ids in find_markers(answer["text"]) for i in ids}
    assert shown <= verified
    if not verified:
        assert UNVERIFIED in answer["notes"]


def test_the_ui_chat_endpoint_answers_through_the_real_model(settings):
    from gradio_client import Client

    from ui.app import serve

    app = serve(settings, "127.0.0.1", free_port(), block=False)
    try:
        started = time.monotonic()
        result = Client(app.local_url, verbose=False, download_files=False).predict(
            "What is a GPU?", [], api_name="/chat"
        )
        elapsed = time.monotonic() - started
    finally:
        app.close()
    assert "error" not in result, result
    assert elapsed < DEADLINE + SLACK + 10
    assert result["model"] == "openai:gemma-3-270m"
    verified = {c["entry_id"] for c in result["citations"] if c["supported"]}
    shown = {i for _, _, ids in find_markers(result["text"]) for i in ids}
    assert shown <= verified
    if not verified and not result["refused"]:
        assert UNVERIFIED in result["notes"]


def test_the_gemma_format_keeps_the_rules_in_the_first_user_turn():
    """llama-cpp-python's own `gemma` format drops system messages: the answer rules never reached the model."""
    from assistant.answer.gemma_server import gemma_prompt

    prompt = gemma_prompt(
        [
            {"role": "system", "content": "Cite every sentence."},
            {"role": "user", "content": "What is a GPU?"},
            {"role": "assistant", "content": "A processor [MLD-0472]."},
            {"role": "user", "content": "And its caveat?"},
        ]
    )
    assert prompt == (
        "<start_of_turn>user\nCite every sentence.\n\nWhat is a GPU?<end_of_turn>\n"
        "<start_of_turn>model\nA processor [MLD-0472].<end_of_turn>\n"
        "<start_of_turn>user\nAnd its caveat?<end_of_turn>\n<start_of_turn>model\n"
    )

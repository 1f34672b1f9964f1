"""A hostile or failing chat model, and leaks: each attack driven through a public surface.

The model is tests/fake_openai.py, a real local HTTP server speaking the OpenAI wire format; the
surfaces are the CLI (`assistant.cli.commands.main`), the Python API (`Assistant.ask`), the UI handlers and
a real Gradio server. Each test names the attack it stands for in the attacks table of the report.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assistant import Assistant, Settings
from assistant.answer.models import StreamCutOffError
from assistant.cli.commands import main
from assistant.errors import ModelError
from tests.conftest import SEED
from tests.fake_openai import (
    CutOff,
    Events,
    FakeOpenAI,
    Flood,
    KeepAlive,
    Raw,
    Reply,
    Status,
    Trickle,
    chunk,
    completion,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),  # gradio's queue stats vs pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

KEY = "sk-test-faults-0123456789"
GOOD = "A GPU is a processor designed for highly parallel workloads, widely used for tensor computation [MLD-0472]."
QUESTION = "What is a GPU?"
SLOW = " ".join(["A GPU is a processor designed for highly parallel workloads [MLD-0472]."] * 20)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=Reply(GOOD)) as server:
        yield server


def model_settings(seed_settings: Settings, fake: FakeOpenAI, **changes) -> Settings:
    base = dict(
        model="openai:test",
        openai_base_url=fake.base_url,
        openai_api_key=KEY,
        max_retries=0,
        request_timeout=5.0,
        answer_deadline=2.0,
    )
    return seed_settings.with_(**{**base, **changes})


def use_env(monkeypatch: pytest.MonkeyPatch, settings: Settings, **extra: str) -> None:
    """The environment `main()` reads its Settings from."""
    env = {
        "ASSISTANT_HOME": str(settings.home),
        "ASSISTANT_KNOWLEDGE": str(SEED),
        "ASSISTANT_MODEL": settings.model,
        "ASSISTANT_ANSWER_DEADLINE": f"{settings.answer_deadline:g}",
        "ASSISTANT_TIMEOUT": f"{settings.request_timeout:g}",
        **({"OPENAI_BASE_URL": settings.openai_base_url} if settings.openai_base_url else {}),
        **({"OPENAI_API_KEY": settings.openai_api_key} if settings.openai_api_key else {}),
        **extra,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def warm(bot: Assistant) -> Assistant:
    """The assistant as in a running server: index, encoder and caches loaded, chat client built.

    The deadline bounds an answer from its start; opening the index and importing the OpenAI client
    come before that and took 2-4 s on a loaded machine, which is not what these tests time."""
    bot.search(QUESTION)
    assert bot.chain.chat is not None
    return bot


def wait_for(condition, seconds: float = 5.0) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def reply_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "model-reply"]


# --- no overall deadline --------------------------------------------------------------------------


def test_a_trickling_model_is_cut_at_the_deadline_and_its_connection_closed(seed_settings, fake):
    bot = warm(Assistant(model_settings(seed_settings, fake, answer_deadline=2.0)))
    fake.script(Trickle(SLOW, every=0.3))
    started = time.monotonic()
    with pytest.raises(StreamCutOffError) as caught:
        bot.ask(QUESTION)
    elapsed = time.monotonic() - started
    assert 1.5 < elapsed < 3.5, elapsed  # retrieval plus a 2 s deadline, not the 12 s the trickle takes
    assert "still replying after 2s (ASSISTANT_ANSWER_DEADLINE)" in str(caught.value)
    assert caught.value.partial.startswith("A GPU is") and len(caught.value.partial) < len(SLOW)
    assert caught.value.sources, "what retrieval found is still attached"
    assert wait_for(lambda: fake.hangups == 1), "the server never saw the client hang up"
    assert wait_for(lambda: not reply_threads())


def test_keep_alives_without_text_end_at_the_deadline_with_one_line_from_the_cli(
    seed_settings, fake, monkeypatch, capsys
):
    use_env(monkeypatch, model_settings(seed_settings, fake, answer_deadline=2.0))
    fake.script(KeepAlive(60, every=0.2))  # each comment resets the per-read timeout
    started = time.monotonic()
    assert main(["ask", QUESTION]) == 1
    assert time.monotonic() - started < 4.0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "did not reply within 2s (ASSISTANT_ANSWER_DEADLINE)" in err
    assert wait_for(lambda: fake.hangups == 1)


def test_a_long_retry_after_is_not_waited_for_past_the_deadline(seed_settings, fake):
    bot = warm(Assistant(model_settings(seed_settings, fake, answer_deadline=2.0, max_retries=2)))
    fake.script(*[Status(429, retry_after=30)] * 3)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"did not reply within 2s"):
        bot.ask(QUESTION)
    assert time.monotonic() - started < 3.5


def test_the_cli_prints_a_cut_off_reply_marked_as_partial(seed_settings, fake, monkeypatch, capsys):
    use_env(monkeypatch, model_settings(seed_settings, fake, answer_deadline=2.0))
    fake.script(Trickle(SLOW, every=0.3))
    assert main(["ask", QUESTION]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("A GPU is") and "partial reply, cut off: not verified" in out
    assert "still replying after 2s" in err and "Traceback" not in err


def test_the_ui_shows_the_partial_reply_and_the_slot_is_free_after_the_deadline(seed_settings, fake):
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(warm(Assistant(model_settings(seed_settings, fake, answer_deadline=2.0))))
    session = new_session()
    fake.script(Trickle(SLOW, every=0.3))
    started = time.monotonic()
    steps = list(h.respond(QUESTION, session, "Both"))
    assert time.monotonic() - started < 3.5
    last = steps[-1][0][-1]["content"]
    assert "still replying after 2s" in last and "partial reply: A GPU is" in last
    list(h.respond(QUESTION, session, "Both"))  # the same session asks again at once: not refused as busy
    assert session.turns[-1].answer is not None and session.turns[-1].answer.citations


# --- no bound on reply size -------------------------------------------------------------------------


def test_a_5_mb_reply_is_read_only_to_the_cap_and_verified_quickly(seed_settings, fake):
    settings = model_settings(seed_settings, fake, answer_deadline=30.0)
    bot = Assistant(settings)
    fake.script(Flood(5_000_000, piece=1000))
    started = time.monotonic()
    answer = bot.ask(QUESTION)
    assert time.monotonic() - started < 15.0  # reading and verifying 1 MB took minutes
    assert len(answer.text) <= settings.max_reply_chars == 6400
    assert any("passed 6,400 characters; it was cut there" in note for note in answer.notes)
    assert wait_for(lambda: fake.hangups == 1)
    # the client hung up: the server could not send the 5 MB (kernel buffers fill before a slow reader closes)
    assert fake.sent_bytes < 2_500_000, "the server kept sending after the cap"


def test_max_tokens_is_sent_and_a_reply_stopped_by_it_is_noted(seed_settings, fake):
    bot = Assistant(model_settings(seed_settings, fake, max_tokens=300))
    fake.script(Events((chunk(GOOD), chunk(None, "length"))))
    answer = bot.ask(QUESTION)
    body = [b for path, _, b in fake.requests if path.endswith("/chat/completions")][-1]
    assert body["max_completion_tokens"] == 300
    assert any("300-token limit (ASSISTANT_MAX_TOKENS)" in note for note in answer.notes)
    assert answer.citations and answer.citations[0].entry_id == "MLD-0472"


def test_the_cli_prints_a_flooding_reply_bounded(seed_settings, fake, monkeypatch, capsys):
    use_env(monkeypatch, model_settings(seed_settings, fake, answer_deadline=30.0))
    fake.script(Flood(5_000_000))
    assert main(["ask", QUESTION]) == 0
    out = capsys.readouterr().out
    assert len(out) < 10_000 and "was cut there" in out


def test_ui_updates_are_few_small_appends(seed_settings, fake):
    """What Gradio sends per update is `gradio.utils.diff` of consecutive outputs: measure that."""
    from gradio.utils import diff

    from ui.handlers import STREAM_EVERY, ChatHandlers, new_session

    h = ChatHandlers(Assistant(model_settings(seed_settings, fake, answer_deadline=30.0)))
    session = new_session()
    list(h.respond(QUESTION, session, "Both"))  # an earlier turn, which later updates must not resend
    fake.script(Flood(200_000, piece=40))
    started = time.monotonic()
    chats = [step[0] for step in h.respond(QUESTION, session, "Both")]
    elapsed = time.monotonic() - started
    sent = [json.dumps(diff(old, new)) for old, new in itertools.pairwise(chats)]
    streamed = sent[:-1]  # the last update replaces the message with the verified answer
    assert all(op[0] in ("append", "add") for d in streamed for op in json.loads(d)), streamed[:3]
    assert len(chats) <= elapsed / STREAM_EVERY + 3  # at most ten updates a second, plus first and last
    total = sum(len(d) for d in sent)
    assert total < 4 * 6400 + len(sent) * 200, total  # each character about once, not once per update
    assert all(old != new for old, new in itertools.pairwise(chats[1:])), "an update without change"


# --- every reply shape is one clear message ----------------------------------------------------------

SHAPES = {
    "malformed SSE": (Events(("{not json",)), "sent a reply that is not a valid chat completion"),
    "empty choices": (Events((chunk(choices=False),)), "sent an empty reply"),
    "empty content": (Events((chunk(""), chunk(None, "stop"))), "sent an empty reply"),
    "JSON when streaming": (Raw(completion(GOOD), "application/json"), "answered with one JSON document"),
    "HTML page (200)": (Raw("<html><body>Sign in</body></html>"), "answered with an HTML page"),
    "HTML page (502)": (Raw("<html><body>Bad gateway</body></html>", code=502), "returned an error (502)"),
    "cut without [DONE]": (Events((chunk("A GPU is a"),), done=False), "ended without its end marker"),
    "dropped mid-stream": (CutOff("A GPU is a"), "cut off half-way"),
}
PARTIAL = {"cut without [DONE]", "dropped mid-stream"}  # text arrived: a marked partial reply


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_reply_shape_is_one_clear_error_never_a_refusal_or_a_traceback(
    seed_settings, fake, monkeypatch, capsys, shape
):
    from ui.handlers import ChatHandlers, new_session
    from ui.render import GENERIC_ERROR

    step, expected = SHAPES[shape]
    settings = model_settings(seed_settings, fake)
    fake.default = step  # every request, retries included, gets this reply
    # the Python API
    with pytest.raises(ModelError) as caught:
        Assistant(settings).ask(QUESTION)
    assert expected in str(caught.value)
    assert isinstance(caught.value, StreamCutOffError) == (shape in PARTIAL)
    # the UI: the message, not "Something went wrong", not a refusal
    session = new_session()
    list(ChatHandlers(Assistant(settings)).respond(QUESTION, session, "Both"))
    assert session.turns[0].answer is None and expected in (session.turns[0].error or "")
    assert session.turns[0].error != GENERIC_ERROR and session.turns[0].sources
    # the /chat API
    assert expected in ChatHandlers(Assistant(settings)).chat_api(QUESTION, [])["error"]
    # the CLI, with the default retries (and time for them)
    use_env(monkeypatch, settings.with_(answer_deadline=30.0))
    assert main(["ask", QUESTION]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_a_condense_reply_that_is_not_a_completion_falls_back_to_rule_condensing(seed_settings, fake):
    settings = model_settings(seed_settings, fake)
    fake.script(Raw("<html>proxy login</html>"), Reply(GOOD))  # the rewrite, then the answer
    history = [("user", "What is a GPU?"), ("assistant", GOOD)]
    answer = Assistant(settings).ask("And what caveat does it have?", history)
    assert answer.citations and answer.citations[0].entry_id == "MLD-0472"


# --- a password in OPENAI_BASE_URL ------------------------------------------------------------------


def test_a_password_in_the_base_url_never_leaks_as_basic_credentials_anywhere(
    seed_settings, fake, monkeypatch, capsys, caplog, tmp_path
):
    from ui.handlers import ChatHandlers, new_session
    from ui.ratings import record_feedback

    caplog.set_level(logging.DEBUG)
    password = "pw-Leaky-Proxy-9876"
    basic = base64.b64encode(f"proxy-user:{password}".encode()).decode()
    url = fake.base_url.replace("http://", f"http://proxy-user:{password}@")
    # no API key: a local server behind a proxy that wants Basic credentials, echoing them when it fails
    settings = model_settings(seed_settings, fake, openai_base_url=url, openai_api_key=None)
    fake.default = Status(400, message="proxy says no", echo_authorization=True)
    seen: list[str] = []
    with pytest.raises(ModelError) as caught:
        Assistant(settings).ask(QUESTION)
    seen.append(str(caught.value))
    sent = [h.get("authorization", "") for p, h, _ in fake.requests if p.endswith("/chat/completions")]
    assert f"Basic {basic}" in sent, sent  # the credentials did go out, so the search below means something
    assert "Authorization: Basic ***" in seen[0]

    h = ChatHandlers(Assistant(settings))
    session = new_session()
    seen += [repr(step) for step in h.respond(QUESTION, session, "Both")]
    seen.append(json.dumps(h.chat_api(QUESTION, [])))
    fake.default = Reply(GOOD)
    seen += [repr(step) for step in h.respond(QUESTION, session, "Both")]
    export = h.export(session)
    seen.append(Path(export["value"]).read_text(encoding="utf-8"))
    seen.append(record_feedback(settings.home, session.turns[0], "down").read_text(encoding="utf-8"))
    seen.append(h.assistant.model_label)

    fake.default = Status(400, message="proxy says no", echo_authorization=True)
    use_env(monkeypatch, settings)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": QUESTION, "gold": ["MLD-0472"], "history": []}) + "\n")
    main(["ask", QUESTION])
    main(["eval", "--questions", str(questions), "--out", str(tmp_path / "eval"), "--modes", "hybrid"])
    out, err = capsys.readouterr()
    seen += [out, err, *(p.read_text(errors="replace") for p in (tmp_path / "eval").glob("*") if p.is_file())]
    seen += [caplog.text, *(r.getMessage() for r in caplog.records)]
    assert any("Basic ***" in text for text in seen)
    for text in seen:
        assert basic not in text and password not in text, text[:400]


# --- terminal escape sequences ---------------------------------------------------------------------

ESCAPES = ("\x1b", "\x9b", "\x9d", "\x07", "\r")


def escaped_knowledge(tmp_path: Path) -> Path:
    """The GPU page with a clear-screen, a window title and an OSC 52 clipboard write in its text."""
    folder = tmp_path / "knowledge"
    folder.mkdir()
    page = (SEED / "000_d927b209ddd51874.txt").read_text(encoding="utf-8")
    page = page.replace(
        "A processor designed for highly parallel workloads",
        "A processor\x1b[2J\x1b]0;pwned\x07 designed for highly\x1b]52;c;cm0gLXJmIH4=\x07 parallel\x9b31m workloads",
    )
    (folder / "gpu.txt").write_text(page, encoding="utf-8")
    return folder


def test_escape_sequences_in_an_entry_or_a_reply_never_reach_the_terminal(
    seed_settings, fake, monkeypatch, capsys, tmp_path
):
    # an entry's text, quoted by the extractive model
    knowledge = escaped_knowledge(tmp_path)
    home = tmp_path / "escaped-home"
    use_env(monkeypatch, seed_settings.with_(home=home, model="extractive"), ASSISTANT_KNOWLEDGE=str(knowledge))
    assert main(["ask", QUESTION]) == 0
    entry_out = capsys.readouterr().out
    assert "A processor designed for highly parallel workloads" in entry_out.replace("  ", " ")
    # a model's reply, in `ask`, `ask --json` and `chat`
    hostile = "A GPU\x1b]0;owned\x07 is a processor\x1b[2J designed for highly parallel workloads\r\x1bc [MLD-0472]."
    fake.default = Reply(hostile + "\nSecond line\x9b2J with a newline kept.")
    # the reply itself must reach the screen escaped: the extractive fallback would show the entry instead
    use_env(monkeypatch, model_settings(seed_settings, fake), ASSISTANT_EXTRACTIVE_FALLBACK="off")
    assert main(["ask", QUESTION]) == 0
    ask_out = capsys.readouterr().out
    assert main(["ask", QUESTION, "--json"]) == 0
    json_out = capsys.readouterr().out
    assert json.loads(json_out)["text"].startswith("A GPU\x1b]0;owned\x07")  # the data is kept, escaped
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(f"{QUESTION}\x1b[2J\n\n"))
    assert main(["chat"]) == 0
    chat_out = capsys.readouterr().out
    for out in (entry_out, ask_out, json_out, chat_out):
        assert not any(c in out for c in ESCAPES), repr(out[:300])
    assert "Second line" in ask_out and "\nSecond line" in ask_out.replace("\n\n", "\n")
    assert "A GPU is a processor designed" in chat_out


# --- the Markdown export ----------------------------------------------------------------------------


def test_the_export_escapes_html_and_drops_unsafe_links(seed_settings):
    from markdown_it import MarkdownIt

    from assistant.types import Answer, Citation
    from ui.handlers import ChatHandlers, new_session
    from ui.session import Turn

    h = ChatHandlers(Assistant(seed_settings))
    session = new_session()
    citations = [
        Citation("MLD-1", "<img src=x onerror=alert(1)>GPU", "concept", "javascript:alert(1)", "<script>q</script>"),
        Citation("MLD-2", "Data", "concept", " data:text/html;base64,PHNjcmlwdD4=", "quote"),
        Citation("MLD-3", "VB", "concept", "vbscript:msgbox(1)", "quote"),
        Citation("MLD-4", "Safe", "concept", "https://example.org/a_(b)", "quote"),
    ]
    text = "<script>alert(1)</script> GPUs [MLD-1][MLD-2][MLD-3][MLD-4]. [click](javascript:alert(2)) ![i](x)"
    session.turns.append(Turn("<b>What</b> is [x](javascript:alert(3))?", Answer("q", text, citations)))
    session.turns.append(Turn("<iframe src=//evil>", error="<svg onload=alert(4)>"))
    markdown = Path(h.export(session)["value"]).read_text(encoding="utf-8")
    page = MarkdownIt("commonmark", {"html": True}).render(markdown)
    for tag in ("<script", "<img", "<iframe", "<svg", "<b>"):
        assert tag not in page.lower(), tag
    links = re.findall(r'(?:href|src)="([^"]*)"', page)
    assert links == ["https://example.org/a_%28b%29"], links  # the only link: javascript:, data:, vbscript: dropped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "[1][2][3][4]" in markdown


# --- login ----------------------------------------------------------------------------------------


def test_login_backs_off_after_five_failures_without_sleeping():
    from ui.auth import LoginThrottle

    now = [1000.0]
    login = LoginThrottle("alice", "correct-horse", clock=lambda: now[0])
    started = time.monotonic()
    results = [login("alice", f"guess-{i}") for i in range(300)]
    assert time.monotonic() - started < 0.5 and not any(results)
    assert login.refused == 295  # only five passwords were ever checked
    assert not login("alice", "correct-horse")  # still blocked: the right password is not even checked
    now[0] += 2.1
    assert login("alice", "correct-horse")  # the delay passed
    for i in range(5):
        login("alice", f"again-{i}")
    assert login.blocked_for("alice") == 2.0
    now[0] += 2.1
    assert not login("alice", "once more")  # checked (the block is over), and wrong
    assert login.blocked_for("alice") == 4.0  # each failure after the fifth doubles the delay
    assert login("bob", "x") is False and login.blocked_for("bob") == 0  # other users are not blocked


@pytest.mark.server
def test_the_served_login_refuses_a_burst_of_guesses(seed_settings, monkeypatch):
    from tests.processes import free_port
    from ui.app import serve

    # the block must outlast the burst, or a slow machine sees it expire and one more guess checked
    monkeypatch.setattr("ui.auth.BASE_DELAY", 120.0)
    app = serve(seed_settings.with_(ui_auth="alice:correct-horse"), port=free_port(), block=False)
    try:
        url = app.local_url + "login"
        started = time.monotonic()
        with httpx.Client(timeout=10) as client:
            codes = [client.post(url, data={"username": "alice", "password": f"g{i}"}).status_code for i in range(300)]
            blocked = client.post(url, data={"username": "alice", "password": "correct-horse"}).status_code
            other_user = client.post(url, data={"username": "mallory", "password": "x"}).status_code
        assert set(codes) == {400} and blocked == 400 and other_user == 400
        assert time.monotonic() - started < 30  # refusals are immediate: nothing sleeps on the event loop
        # five passwords checked; the rest, the right one, and another user from the same client refused unchecked
        assert app.auth.refused == 295 + 1 + 1  # type: ignore[union-attr]
    finally:
        app.close()


# --- one running answer per session -------------------------------------------------------------------


def test_one_session_cannot_run_two_answers_but_another_session_can(seed_settings, fake):
    from ui.handlers import BUSY, ChatHandlers, new_session

    h = ChatHandlers(Assistant(model_settings(seed_settings, fake, answer_deadline=3.0)))
    slow_session, other = new_session(), new_session()
    fake.script(Trickle(SLOW, every=0.2))
    slow = h.respond(QUESTION, slow_session, "Both")
    next(slow), next(slow)  # the question is shown, then the first words: the answer is running
    second = list(h.respond("What is NCCL used for?", slow_session, "Both"))
    assert len(second) == 1 and len(slow_session.turns) == 1  # refused at once, nothing added
    assert BUSY
    started = time.monotonic()
    list(h.respond(QUESTION, other, "Both"))
    assert other.turns[0].answer is not None and time.monotonic() - started < 2.0
    list(slow)
    assert "still replying" in (slow_session.turns[0].error or "")
    list(h.respond(QUESTION, slow_session, "Both"))  # once it ended, the session may ask again
    assert len(slow_session.turns) == 2


def test_one_api_client_session_cannot_run_two_answers(seed_settings, fake):
    from types import SimpleNamespace

    from ui.handlers import BUSY, ChatHandlers

    h = ChatHandlers(Assistant(model_settings(seed_settings, fake, answer_deadline=2.0)))
    client = SimpleNamespace(session_hash="client-1")  # what Gradio passes as the gr.Request
    fake.script(Trickle(SLOW, every=0.2))
    results: list[dict] = []
    first = threading.Thread(target=lambda: results.append(h.chat_api(QUESTION, [], client)))  # type: ignore[arg-type]
    first.start()
    assert wait_for(lambda: len(fake.requests) == 1)
    assert h.chat_api(QUESTION, [], client) == {"error": BUSY}  # type: ignore[arg-type]
    assert "citations" in h.chat_api(QUESTION, [], SimpleNamespace(session_hash="client-2"))  # type: ignore[arg-type]
    first.join()
    assert "still replying after 2s" in results[0]["error"]
    assert "citations" in h.chat_api(QUESTION, [], client)  # type: ignore[arg-type]


# --- a slow model cannot starve the others ---------------------------------------------------------


@pytest.mark.server
def test_sessions_asking_a_trickling_model_cannot_starve_the_others(seed_settings, tmp_path):
    from tests.test_soak import load_soak
    from ui.app import CONCURRENCY

    soak = load_soak()
    lines: list[str] = []
    summary = soak.run(
        seed_settings, sessions=3, questions=2, seconds=60, out=tmp_path / "soak.json", echo=lines.append,
        slow=CONCURRENCY, deadline=3.0,
    )  # fmt: skip
    assert summary["slow_requests"] == summary["slow_cut_at_deadline"] == 2 * CONCURRENCY  # every slot held, cut
    assert summary["answered"] == summary["requests"] == 6 and summary["waited_beyond_deadline"] == 0
    assert summary["max_ms"] < (3.0 + soak.OWN_ANSWER_SECONDS) * 1000 and summary["ok"] is True
    assert any("waited beyond the deadline: 0" in line for line in lines)


@pytest.mark.server
def test_a_served_streaming_answer_sends_each_character_about_once(seed_settings, fake):
    """Bytes on the wire: the real server's SSE stream to one browser session while an answer streams."""
    import uuid

    from tests.processes import free_port
    from ui.app import serve
    from ui.handlers import STREAM_EVERY

    words = " ".join(f"GPUs run kernels number {i} fast [MLD-0472]." for i in range(60))  # 2.6 kB
    app = serve(model_settings(seed_settings, fake, answer_deadline=60.0), port=free_port(), block=False)
    try:
        config = httpx.get(app.local_url + "config", timeout=10).json()
        ids = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
        deps = enumerate(config["dependencies"])
        index, dep = next((i, d) for i, d in deps if [ids.get(t[0]) for t in d["targets"]] == ["question"])
        session = uuid.uuid4().hex[:10]
        fake.script(Trickle(words, every=0.01))
        body = {"data": [QUESTION, None, "Both"], "fn_index": index, "session_hash": session, "trigger_id": None}
        body["event_data"], body["trigger_id"] = None, dep["targets"][0][0]
        httpx.post(app.local_url + "gradio_api/queue/join", json=body, timeout=10).raise_for_status()
        sizes: list[int] = []
        started = time.monotonic()
        url = app.local_url + "gradio_api/queue/data"
        with httpx.stream("GET", url, params={"session_hash": session}, timeout=60) as response:
            for line in response.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") == "process_generating":
                    sizes.append(len(line) + 1)
                if message.get("msg") == "process_completed":
                    break
        elapsed = time.monotonic() - started
    finally:
        app.close()
    assert 5 <= len(sizes) <= elapsed / STREAM_EVERY + 3
    # between the first update (the question) and the last (the verified answer, with its panels), each
    # update is ~350 bytes of envelope plus its new characters only: never the message so far again
    # (as before: ~4x the bytes for this answer, gigabytes for a 5 MB reply)
    streamed = sizes[1:-1]
    assert max(streamed) < 700 and sum(streamed) < 500 * len(streamed), sizes

"""Security: loopback by default, ASSISTANT_UI_AUTH, and API keys that never leak.

A distinctive fake key is sent to tests/fake_openai.py (a real local server) while the model
fails in every way it can; then every place a key could surface is searched for it: log
records (all loggers, DEBUG), error messages, chat messages, the /chat payloads, the model
label and page header, the Markdown export, the feedback file and `repr(Settings)`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assistant import Assistant, Settings
from assistant.answer.models import model_label
from assistant.answer.models.text_reply import StubChatModel
from assistant.cli.commands import main
from assistant.errors import SettingsError
from tests.conftest import SEED
from tests.fake_openai import CutOff, FakeOpenAI, Reply, Status
from tests.processes import free_port

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),  # gradio's queue stats vs pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

KEY = "sk-test-DO-NOT-LEAK-123"
LEAK = "DO-NOT-LEAK"  # any piece of the key
GOOD = "A GPU is a processor designed for highly parallel workloads, widely used for tensor computation [MLD-0472]."


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as in /proc/net/tcp[6]) of sockets listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].rpartition(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                found.add(address)
    return found


# --- loopback by default ------------------------------------------------------------------------


def test_the_default_host_is_loopback() -> None:
    from assistant.cli.commands import build_parser

    assert Settings().host == "127.0.0.1"
    assert Settings.from_env({}).host == "127.0.0.1"
    assert build_parser().parse_args(["serve"]).host is None  # the CLI falls back to the setting


@pytest.mark.server
def test_the_launched_server_listens_on_127_0_0_1_only(seed_settings: Settings) -> None:
    from ui.app import serve

    port = free_port()
    app = serve(seed_settings, port=port, block=False)  # no host given: the default
    try:
        assert app.server_name == "127.0.0.1"
        assert app.local_url.startswith(f"http://127.0.0.1:{port}")
        assert listening_addresses(port) == {"0100007F"}, "listening beyond 127.0.0.1"
        assert httpx.get(app.local_url + "config", timeout=10).status_code == 200
    finally:
        app.close()


# --- ASSISTANT_UI_AUTH ---------------------------------------------------------------------------


def env_for(settings: Settings, **extra: str) -> dict[str, str]:
    return {
        "ASSISTANT_HOME": str(settings.home),
        "ASSISTANT_KNOWLEDGE": str(SEED),
        "ASSISTANT_MODEL": "extractive",
        **extra,
    }


@pytest.mark.server
def test_ui_auth_from_the_environment_refuses_unauthenticated_requests(seed_settings: Settings) -> None:
    from gradio_client import Client

    from ui.app import serve

    settings = Settings.from_env(env_for(seed_settings, ASSISTANT_UI_AUTH="alice:correct-horse"))
    assert settings.ui_auth == "alice:correct-horse" and "correct-horse" not in repr(settings)
    app = serve(settings, port=free_port(), block=False)
    try:
        url = app.local_url
        assert httpx.get(url + "config", timeout=10).status_code in (401, 403)
        for path in ("gradio_api/call/chat", "gradio_api/api/chat", "gradio_api/queue/join"):
            response = httpx.post(url + path, json={"data": ["What is a GPU?", []]}, timeout=10)
            assert response.status_code in (401, 403, 404, 405), (path, response.status_code)
            assert "MLD-0472" not in response.text
        with pytest.raises(Exception):  # noqa: B017 - gradio_client raises different types per version
            Client(url, verbose=False)
        with pytest.raises(Exception):  # noqa: B017
            Client(url, verbose=False, auth=("alice", "wrong"))
        result = Client(url, verbose=False, auth=("alice", "correct-horse")).predict(
            "What is a GPU?", [], api_name="/chat"
        )
        assert result["citations"][0]["entry_id"] == "MLD-0472"
    finally:
        app.close()


def test_a_malformed_ui_auth_stops_serve_with_one_line(
    seed_settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ui.app import serve

    for key, value in env_for(seed_settings, ASSISTANT_UI_AUTH="alice-without-password").items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SettingsError, match="ASSISTANT_UI_AUTH must look like user:password"):
        serve(Settings.from_env(), port=free_port(), block=False)
    assert main(["serve", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "alice-without-password" not in err


# --- API keys never leak ---------------------------------------------------------------------------


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=Reply(GOOD)) as server:
        yield server


def leaky_failures() -> list:
    """Server replies that echo the key back, the way some proxies and servers do."""
    return [
        Status(401, message=f"Incorrect API key provided: {KEY}"),
        Status(400, message=f"Bad request for key {KEY}"),
        *[Status(500, message=f"upstream rejected Bearer {KEY}")] * 2,  # max_retries=1: two requests a turn
        *[Status(429, retry_after=0.1, message=f"rate limit for {KEY}")] * 2,
        CutOff("A GPU is a processor designed"),
    ]


@pytest.mark.parametrize("where", ["OPENAI_API_KEY", "OPENAI_API_KEY and a password in OPENAI_BASE_URL"])
def test_the_api_key_never_appears_in_logs_errors_ui_or_exports(
    seed_settings: Settings, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    from ui.app import header_html
    from ui.handlers import ChatHandlers, new_session
    from ui.ratings import record_feedback

    caplog.set_level(logging.DEBUG)  # every logger, the HTTP client libraries' included
    url = fake_openai.base_url
    if "password" in where:
        url = url.replace("http://", f"http://proxy-user:{KEY}@")
    settings = seed_settings.with_(
        model="openai:test", openai_base_url=url, openai_api_key=KEY, max_retries=1, request_timeout=2
    )
    bot = Assistant(settings)
    h = ChatHandlers(bot)
    session = new_session()
    seen: list[str] = [bot.model_label, model_label(settings), header_html(bot), repr(settings), str(settings)]
    fake_openai.script(*leaky_failures())
    for _ in range(6):  # 401, 400, 500 x2, 429 x2, cut off - each a failed turn - then a good one
        for outputs in h.respond("What is a GPU?", session, "Both"):
            seen.append(repr(outputs))
    seen.append(json.dumps(h.chat_api("What is a GPU?", [])))
    fake_openai.script(Status(401, message=f"Incorrect API key provided: {KEY}"))
    seen.append(json.dumps(h.chat_api("What is a GPU?", [])))
    errors = [t.error for t in session.turns if t.error]
    assert len(errors) == 5 and session.turns[-1].answer, [t.error for t in session.turns]
    assert any("rejected the API key (401)" in e for e in errors) and any("(400: " in e for e in errors)
    seen += errors

    export = h.export(session)
    seen.append(Path(export["value"]).read_text(encoding="utf-8"))
    seen.append(record_feedback(settings.home, session.turns[-1], "up").read_text(encoding="utf-8"))

    # the key did go out - in the Authorization header - so the search below means something
    sent = [headers.get("authorization", "") for path, headers, _ in fake_openai.requests if "chat" in path]
    assert sent and all(value.startswith(("Bearer ", "Basic ")) for value in sent)
    if "password" not in where:
        assert sent[0] == f"Bearer {KEY}"
    assert caplog.records, "nothing was logged - the log check would be empty"
    assert any(r.name.startswith(("httpx", "openai")) for r in caplog.records)
    for text in [*seen, caplog.text, *(r.getMessage() for r in caplog.records)]:
        assert LEAK not in text, text[:500]


def test_a_password_in_the_base_url_is_not_in_the_settings_repr() -> None:
    settings = Settings.from_env({"OPENAI_BASE_URL": f"https://proxy-user:{KEY}@proxy.example/v1"})
    assert LEAK not in repr(settings)


def test_a_password_in_the_chroma_url_is_not_in_the_unreachable_error(tmp_path: Path) -> None:
    from assistant.errors import IndexUnavailableError
    from assistant.index.chroma_index import Index
    from tests.fakes import FakeEmbeddings

    url = f"http://admin:{KEY}@127.0.0.1:{free_port()}"
    index = Index(Settings(home=tmp_path / "home", chroma_url=url), embedder=FakeEmbeddings())
    with pytest.raises(IndexUnavailableError, match="Cannot reach the Chroma server at http://") as caught:
        index.vector_ids()
    assert LEAK not in str(caught.value)


def test_an_unexpected_exception_carrying_the_key_is_logged_without_it(
    seed_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    from ui.handlers import ChatHandlers, new_session
    from ui.render import GENERIC_ERROR

    settings = seed_settings.with_(openai_api_key=KEY)
    boom = RuntimeError(f"client bug: headers={{'Authorization': 'Bearer {KEY}'}}")
    h = ChatHandlers(Assistant(settings, model=StubChatModel(errors=[boom, boom])))
    last = list(h.respond("What is a GPU?", new_session(), "Both"))[-1][0][-1]["content"]
    assert h.chat_api("What is a GPU?", []) == {"error": GENERIC_ERROR}
    assert LEAK not in last and "client bug" not in last
    assert "client bug" in caplog.text and "Traceback" in caplog.text  # the details are in the server log ...
    assert LEAK not in caplog.text  # ... without the key


@pytest.mark.server
def test_the_api_key_never_reaches_the_served_page_or_chat_payloads(
    seed_settings: Settings, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    from gradio_client import Client

    from ui.app import serve

    caplog.set_level(logging.DEBUG)
    settings = seed_settings.with_(
        model="openai:test", openai_base_url=fake_openai.base_url, openai_api_key=KEY, max_retries=0
    )
    fake_openai.script(Status(401, message=f"Incorrect API key provided: {KEY}"), Status(400, message=KEY))
    app = serve(settings, "127.0.0.1", free_port(), block=False)
    try:
        client = Client(app.local_url, verbose=False, download_files=False)
        payloads = [client.predict("What is a GPU?", [], api_name="/chat") for _ in range(3)]
        assert "error" in payloads[0] and "error" in payloads[1]
        assert payloads[2]["citations"][0]["entry_id"] == "MLD-0472"
        page = httpx.get(app.local_url, timeout=10).text + httpx.get(app.local_url + "config", timeout=10).text
        assert "openai:test @ http://127.0.0.1" in page  # the header names the model ...
    finally:
        app.close()
    for text in [page, json.dumps(payloads), caplog.text]:
        assert LEAK not in text  # ... but not the key

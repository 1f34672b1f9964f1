"""The real Gradio server on 127.0.0.1: the page it serves (header, examples, buttons) and `/chat`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.processes import free_port

pytestmark = [
    pytest.mark.server,
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),  # gradio's queue stats vs pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@contextmanager
def running(settings, assistant=None) -> Iterator[str]:
    """Serve the app in a background thread; yields its URL and closes it afterwards."""
    from ui.app import serve

    app = serve(settings, "127.0.0.1", free_port(), block=False, assistant=assistant)
    try:
        yield app.local_url
    finally:
        app.close()


def client(url: str, **kwargs):
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, **kwargs)


def test_chat_endpoint_answers_with_citations_and_refuses_off_topic(seed_settings):
    with running(seed_settings) as url:
        bot = client(url)
        result = bot.predict("What is a GPU?", [], api_name="/chat")
        assert "error" not in result, result
        assert "[MLD-0472]" in result["text"] and not result["refused"]
        gpu = next(c for c in result["citations"] if c["entry_id"] == "MLD-0472")
        assert gpu["quote"] and gpu["title"] == "GPU" and gpu["supported"] is True
        assert set(gpu) == {"entry_id", "title", "kind", "url", "quote", "supported", "support"}
        assert result["sources"][0]["rank"] == 1 and {"entry_id", "title", "score", "rank"} <= set(result["sources"][0])
        assert result["model"] == "extractive" and "total" in result["timings"]

        follow_up = bot.predict(
            "What caveat does it have?", [["user", "What is a GPU?"], ["assistant", result["text"]]], api_name="/chat"
        )
        assert "error" not in follow_up and any(c["entry_id"] == "MLD-0472" for c in follow_up["citations"])

        refused = bot.predict("What is the capital of France?", [], api_name="/chat")
        assert refused["refused"] is True and refused["citations"] == []

        assert "error" in bot.predict("", [], api_name="/chat")
        # only /chat is callable by API clients; the UI's own events are private
        assert list(bot.view_api(print_info=False, return_format="dict")["named_endpoints"]) == ["/chat"]


def test_model_failure_comes_back_as_a_friendly_error(seed_settings):
    from assistant import Assistant
    from assistant.answer.models.text_reply import StubChatModel
    from assistant.errors import ModelError

    down = ModelError("The chat model at http://127.0.0.1:9/v1 could not be reached - start it")
    bot = Assistant(seed_settings, model=StubChatModel(errors=[down] * 4))
    with running(seed_settings, bot) as url:
        result = client(url).predict("What is a GPU?", [], api_name="/chat")
    assert result == {"error": str(down)}


def test_auth_refuses_anonymous_callers(seed_settings):
    settings = seed_settings.with_(ui_auth="user:pw")
    with running(settings) as url:
        config = httpx.get(url + "config", follow_redirects=False, timeout=10)
        assert config.status_code in (401, 403, 302, 307), config.status_code
        with pytest.raises(Exception):  # noqa: B017 - gradio_client raises different types per version
            client(url)
        with pytest.raises(Exception):  # noqa: B017
            client(url, auth=("user", "wrong"))
        result = client(url, auth=("user", "pw")).predict("What is a GPU?", [], api_name="/chat")
        assert any(c["entry_id"] == "MLD-0472" for c in result["citations"])


def components(url: str) -> dict[str, dict]:
    """The served page's components by elem_id (their props as the browser receives them)."""
    config = httpx.get(url + "config", timeout=10).json()
    return {c["props"].get("elem_id") or str(c["id"]): c for c in config["components"]}


def test_served_page_shows_the_knowledge_derived_examples_copy_and_retry(seed_settings):
    with running(seed_settings) as url:
        page = components(url)
        header = page["header"]["props"]["value"]
        assert "knowledge/seed" in header and "1 concept" in header and "59 papers" in header
        assert "Model: <b>extractive (offline)</b>" in header
        chat = page["chat"]["props"]
        assert chat["buttons"] == ["copy"] and chat["_retryable"] is True
        assert "chips" not in page and "source-picker" not in page  # one citation display, rows open entries
        examples = [c["props"].get("value") for c in httpx.get(url + "config", timeout=10).json()["components"]]
        derived = [e for e in examples if isinstance(e, str) and e.startswith(("What is ", "Which papers address "))]
        assert derived[0] == "What is a GPU?" and len(derived) == 4
        bot = client(url)
        for question in derived:  # every example is answered, through the served endpoint
            reply = bot.predict(question, [], api_name="/chat")
            assert reply.get("refused") is False and reply["citations"], (question, reply)


def test_header_and_examples_follow_the_knowledge_served(tmp_path):
    from assistant import Settings

    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    (knowledge / "page.txt").write_text(
        "Systems · TST-0002\nGradient checkpointing\nA way to save memory in training by recomputing activations"
        " in the backward pass instead of storing them.\n",
        encoding="utf-8",
    )
    settings = Settings(home=tmp_path / "home", knowledge=(knowledge,), model="extractive")
    with running(settings) as url:
        page = components(url)
        header = page["header"]["props"]["value"]
        assert knowledge.as_posix() in header and "1 concept · " in header and "GPU" not in header
        assert "0 papers" not in header and "Answers from concept pages," in header  # only what it holds
        values = [c["props"].get("value") for c in httpx.get(url + "config", timeout=10).json()["components"]]
        assert "What is gradient checkpointing?" in values and "What is a GPU?" not in values
        reply = client(url).predict("What is gradient checkpointing?", [], api_name="/chat")
        assert reply["refused"] is False and reply["citations"][0]["entry_id"] == "TST-0002"

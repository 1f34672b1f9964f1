"""The chat-model factory and failure translation, against a real local OpenAI-wire server.

No mocks: ChatOpenAI and the real `openai` client talk HTTP to tests/fake_openai.py, so
retries, Retry-After, timeouts and dropped streams behave as they would against vLLM or OpenAI.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from assistant.answer.models import (
    StreamCutOffError,
    complete,
    make_chat_model,
    model_label,
    stream_reply,
)
from assistant.answer.models.text_reply import StubChatModel
from assistant.answer.prompts import load_prompt
from assistant.errors import ModelError, SettingsError
from assistant.settings import Settings
from tests.fake_openai import CutOff, Delay, FakeOpenAI, Reply, Status
from tests.processes import free_port

KEY = "sk-test-SECRET-0123456789"
ANSWER = "A GPU is a throughput processor [MLD-0472]."
MESSAGES = [SystemMessage("Answer from the context."), HumanMessage("What is a GPU?")]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def chat_model(settings: Settings):
    """The LangChain model the factory builds for these settings."""
    return make_chat_model(settings).model


def settings_for(url: str, **changes) -> Settings:
    """Small timeouts and retries keep the suite fast; Settings are built explicitly, never from env."""
    base = dict(model="openai:gpt-test", openai_base_url=url, openai_api_key=KEY, request_timeout=5.0, max_retries=1)
    return Settings(**{**base, **changes})


def chat_requests(server: FakeOpenAI) -> list[tuple[str, dict, dict]]:
    return [r for r in server.requests if r[0] == "/v1/chat/completions"]


# --- the openai path, over real HTTP ---------------------------------------------------------


def test_non_streaming_reply(server):
    server.script(Reply(ANSWER))
    model = chat_model(settings_for(server.base_url)).model_copy(update={"streaming": False})
    assert complete(model, MESSAGES) == ANSWER
    [(_, _, body)] = chat_requests(server)
    assert body["stream"] is False
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0
    assert [m["content"] for m in body["messages"]] == ["Answer from the context.", "What is a GPU?"]


def test_streamed_reply_arrives_in_several_deltas(server):
    server.script(Reply(ANSWER))
    deltas = list(stream_reply(chat_model(settings_for(server.base_url)), MESSAGES))
    assert len(deltas) >= 5
    assert "".join(deltas) == ANSWER
    [(_, _, body)] = chat_requests(server)
    assert body["stream"] is True


def test_complete_on_a_streaming_model_joins_the_stream(server):
    server.script(Reply(ANSWER))
    assert complete(chat_model(settings_for(server.base_url)), MESSAGES) == ANSWER


def test_rate_limit_with_retry_after_is_retried_by_the_client(server):
    server.script(Status(429, retry_after=1), Reply(ANSWER))
    assert "".join(stream_reply(chat_model(settings_for(server.base_url)), MESSAGES)) == ANSWER
    assert len(chat_requests(server)) == 2


def test_server_error_then_success_is_retried(server):
    server.script(Status(500), Reply(ANSWER))
    assert "".join(stream_reply(chat_model(settings_for(server.base_url)), MESSAGES)) == ANSWER
    assert len(chat_requests(server)) == 2


def test_persistent_server_error_gives_up_with_a_clear_message(server):
    server.default = Status(500)
    model = chat_model(settings_for(server.base_url, max_retries=1))
    with pytest.raises(ModelError) as caught:
        list(stream_reply(model, MESSAGES))
    message = str(caught.value)
    assert message == (
        f"The chat model at {server.base_url} returned an error (500)"
        " - check the server's log, or set ASSISTANT_MODEL=extractive"
    )
    # the client's retries (one here) and no second loop on top
    assert len(chat_requests(server)) == 1 + 1


def test_persistent_rate_limit_says_wait(server):
    server.default = Status(429, retry_after=0.01)
    with pytest.raises(ModelError, match=r"is rate limiting \(429\) - wait"):
        list(stream_reply(chat_model(settings_for(server.base_url)), MESSAGES))
    assert len(chat_requests(server)) == 2


def test_rejected_key_is_not_retried(server):
    server.script(Status(401, message="Incorrect API key provided"))
    with pytest.raises(ModelError, match=r"rejected the API key \(401\) - check OPENAI_API_KEY"):
        list(stream_reply(chat_model(settings_for(server.base_url)), MESSAGES))
    assert len(chat_requests(server)) == 1


def test_stream_cut_off_half_way_keeps_the_partial_text(server):
    server.script(CutOff("A GPU is a "), Reply("never sent: no retry after text was shown"))
    received: list[str] = []
    with pytest.raises(StreamCutOffError) as caught:
        for delta in stream_reply(chat_model(settings_for(server.base_url)), MESSAGES):
            received.append(delta)
    assert str(caught.value) == "The model's reply was cut off half-way - ask again"
    assert isinstance(caught.value, ModelError)
    assert caught.value.partial == "A GPU is a " == "".join(received)
    assert len(chat_requests(server)) == 1


def test_stream_broken_before_any_text_says_ask_again(server):
    # the client cannot retry a response whose body broke; the message says what to do instead
    server.script(CutOff(""), Reply(ANSWER))
    model = chat_model(settings_for(server.base_url, max_retries=0))
    with pytest.raises(ModelError, match=r"dropped the connection - ask again"):
        list(stream_reply(model, MESSAGES))
    assert len(chat_requests(server)) == 1


def test_non_streamed_cut_off_is_retried_by_the_client(server):
    server.script(CutOff(ANSWER), Reply(ANSWER))
    model = chat_model(settings_for(server.base_url, max_retries=1)).model_copy(update={"streaming": False})
    assert complete(model, MESSAGES) == ANSWER
    assert len(chat_requests(server)) == 2


def test_connection_refused_names_the_fix():
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = chat_model(settings_for(url, max_retries=0))
    with pytest.raises(ModelError) as caught:
        list(stream_reply(model, MESSAGES))
    assert str(caught.value) == (
        f"The chat model at {url} could not be reached (connection refused)"
        " - start it, check OPENAI_BASE_URL, or set ASSISTANT_MODEL=extractive"
    )


def test_timeout_names_the_limit(server):
    server.script(Delay(3), Delay(3))
    model = chat_model(settings_for(server.base_url, request_timeout=0.5, max_retries=1))
    with pytest.raises(ModelError, match=r"timed out after 0\.5s"):
        complete(model, MESSAGES)
    assert len(chat_requests(server)) == 2


def test_api_key_is_sent_but_never_shown(server):
    server.script(Reply(ANSWER), Status(400, message=f"Bad request for key {KEY}"))
    settings = settings_for(server.base_url)
    model = chat_model(settings)
    assert complete(model, MESSAGES) == ANSWER
    with pytest.raises(ModelError) as caught:
        complete(model, MESSAGES)
    headers = chat_requests(server)[0][1]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert "rejected the request (400" in str(caught.value)
    assert KEY not in str(caught.value)
    assert KEY not in model_label(settings)
    assert KEY not in repr(settings)


def test_local_server_without_a_key_gets_a_placeholder(server):
    settings = Settings(model="auto", openai_base_url=server.base_url, max_retries=0)
    assert complete(chat_model(settings), MESSAGES) == "Hello from the fake model."
    assert chat_requests(server)[0][1]["authorization"] == "Bearer not-needed"
    assert chat_requests(server)[0][2]["model"] == "gpt-4o-mini"


def test_fake_server_lists_models(server):
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    assert [m.id for m in client.models.list()] == ["gpt-4o-mini"]


# --- factory and label -----------------------------------------------------------------------


def test_factory_openai_branch_configures_the_client():
    from langchain_openai import ChatOpenAI

    settings = settings_for("http://127.0.0.1:8000/v1", request_timeout=7.0, max_retries=3)
    chat = make_chat_model(settings)
    model = chat.model
    assert isinstance(model, ChatOpenAI)
    assert (chat.name, chat.rewrites_followups) == ("openai:gpt-test", True)
    assert (model.model_name, model.openai_api_base) == ("gpt-test", "http://127.0.0.1:8000/v1")
    assert (model.streaming, model.temperature, model.request_timeout, model.max_retries) == (True, 0, 7.0, 3)


def test_factory_auto_with_a_base_url_means_openai():
    model = make_chat_model(Settings(model="auto", openai_base_url="http://127.0.0.1:8000/v1")).model
    assert type(model).__name__ == "ChatOpenAI"


@pytest.mark.parametrize(("name", "kind"), [("stub", "StubChatModel"), ("extractive", "ExtractiveChatModel")])
def test_factory_offline_branches_do_not_rewrite_followups(name, kind):
    chat = make_chat_model(Settings(model=name))
    assert (type(chat.model).__name__, chat.name, chat.rewrites_followups) == (kind, name, False)


@pytest.mark.parametrize("name", ["gpt-4", "openai:", "ollama:llama3"])
def test_factory_unknown_model_lists_the_choices(name):
    with pytest.raises(SettingsError, match="auto, openai:<model>, extractive, stub"):
        make_chat_model(Settings(model=name))


def test_factory_openai_without_key_or_url_says_what_to_set():
    with pytest.raises(SettingsError, match="needs OPENAI_API_KEY"):
        make_chat_model(Settings(model="openai:gpt-4o-mini"))


@pytest.mark.parametrize(
    ("settings", "label"),
    [
        (
            Settings(model="openai:gpt-4o-mini", openai_base_url="http://127.0.0.1:8000/v1", openai_api_key=KEY),
            "openai:gpt-4o-mini @ http://127.0.0.1:8000/v1",
        ),
        (
            Settings(model="openai:gpt-4o-mini", openai_api_key=KEY),
            "openai:gpt-4o-mini @ https://api.openai.com/v1",
        ),
        (
            Settings(model="openai:m", openai_base_url="http://user:pw@10.0.0.1/v1"),
            "openai:m @ http://10.0.0.1/v1",
        ),
        (Settings(model="extractive"), "extractive (offline)"),
        (Settings(model="auto"), "extractive (offline)"),
        (Settings(model="stub"), "stub (scripted test model)"),
    ],
)
def test_model_label(settings, label):
    assert model_label(settings) == label


# --- the stub ----------------------------------------------------------------------------------


def test_stub_replies_in_order_then_repeats_the_last_and_records_calls():
    stub = StubChatModel(replies=["first", "second"])
    assert [complete(stub, [HumanMessage(f"q{i}")]) for i in range(3)] == ["first", "second", "second"]
    assert [call[0].content for call in stub.calls] == ["q0", "q1", "q2"]


def test_stub_default_reply():
    assert complete(StubChatModel(), "anything") == load_prompt("refusal")


def test_stub_streams_in_several_chunks_and_keeps_broken_citations():
    text = "GPUs run kernels [MLD-0472]. Also [NOPE-1] and a broken [MLD-0472"
    deltas = list(stream_reply(StubChatModel(replies=[text]), MESSAGES))
    assert len(deltas) > 3
    assert "".join(deltas) == text
    assert complete(StubChatModel(replies=[text]), MESSAGES) == text


def test_stub_scripted_errors_are_translated_once_without_a_retry_loop():
    stub = StubChatModel(replies=["ok"], errors=[ConnectionRefusedError("refused"), None])
    with pytest.raises(ModelError, match=r"^The chat model \(stub\) could not be reached \(connection refused\)"):
        "".join(stream_reply(stub, MESSAGES))
    assert "".join(stream_reply(stub, MESSAGES)) == "ok"  # the next question works
    assert len(stub.calls) == 2

    failing = StubChatModel(errors=[TimeoutError(), None])
    with pytest.raises(ModelError, match=r"^The chat model \(stub\) timed out"):
        complete(failing, MESSAGES)
    assert len(failing.calls) == 1


def test_bugs_are_not_disguised_as_model_errors():
    stub = StubChatModel(errors=[KeyError("bug")])
    with pytest.raises(KeyError):
        complete(stub, MESSAGES)
    assert len(stub.calls) == 1

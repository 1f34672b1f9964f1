"""The chat UI's pure helpers and handlers, without a server: chips, cards, export, feedback, errors."""

from __future__ import annotations

import json
import re

import pytest

from assistant.types import Answer, Citation, Entry, Source
from ui.cards import entry_card, highlight
from ui.feedback import conversation_markdown, record_feedback, vote_of
from ui.render import (
    api_payload,
    chip_choices,
    md_text,
    number_citations,
    parse_history,
    render_answer,
    render_partial,
    render_text,
    sources_html,
)
from ui.session import Turn

PAYLOAD = "<img src=x onerror=alert(1)>"


def citation(entry_id: str, title: str, quote: str = "A quote.", supported: bool = True, url=None) -> Citation:
    return Citation(entry_id, title, "concept", url, quote, supported)


def answer_of(text: str, citations: list[Citation], notes: list[str] | None = None, **more) -> Answer:
    return Answer("q", text, citations, notes=notes or [], **more)


def no_live_tag(html: str) -> None:
    assert "<img" not in html.lower() and "<script" not in html.lower()


# --- chips -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cited", "expected"),
    [
        ("GPUs compute [MLD-0472].", ["MLD-0472"], {"MLD-0472": 1}),
        (
            "A [abs-0123456789]. B [MLD-0472]. C [abs-0123456789].",
            ["MLD-0472", "abs-0123456789"],
            {"abs-0123456789": 1, "MLD-0472": 2},
        ),
        (
            "Both [MLD-0472, arxiv:2401.12345].",
            ["arxiv:2401.12345", "MLD-0472"],
            {"MLD-0472": 1, "arxiv:2401.12345": 2},
        ),
        # a citation the text no longer marks (unverified) still gets the next number
        ("Only one [MLD-0472].", ["MLD-0472", "glossary:gpu"], {"MLD-0472": 1, "glossary:gpu": 2}),
        # markers of ids that are not citations are not numbered
        ("Dropped [XYZ-1] kept [MLD-0472].", ["MLD-0472"], {"MLD-0472": 1}),
        ("No markers at all.", [], {}),
    ],
)
def test_number_citations_follows_first_appearance(text, cited, expected):
    numbering = number_citations(text, [citation(c, c) for c in cited])
    assert numbering == expected


def test_markers_become_chip_numbers():
    text = "GPUs are parallel [MLD-0472]. Papers agree [abs-0123456789, MLD-0472]."
    numbering = number_citations(text, [citation("MLD-0472", "GPU"), citation("abs-0123456789", "Paper")])
    out = render_text(text, numbering)
    assert "MLD-0472]" not in out and "[abs-" not in out
    assert re.findall(r">\[(\d)\]<", out) == ["1", "2", "1"]
    assert "cite-id-MLD-0472" in out  # the click target names the entry


def test_partial_stream_hides_a_marker_still_arriving():
    out = render_partial("GPUs are parallel [MLD-0472]. More [MLD-04")
    assert ">[1]<" in out and "MLD-04" not in out.replace("cite-id-MLD-0472", "")


def test_answer_message_has_chips_and_marks_unverified():
    answer = answer_of(
        "GPUs are parallel [MLD-0472].",
        [citation("MLD-0472", "GPU"), citation("abs-0123456789", "A paper", supported=False)],
        ["Unverified citation removed - abs-0123456789 does not support: x"],
    )
    numbering = number_citations(answer.text, answer.citations)
    out = render_answer(answer, numbering, turn=3)
    assert "[1] GPU</span>" in out
    assert "unverified" in out and "[2] A paper · unverified" in out
    assert "cite-turn-3" in out
    assert [label for label, _ in chip_choices(answer, numbering)] == ["[1] GPU", "[2] A paper · unverified"]


def test_chat_text_is_escaped_not_markup():
    for text in (PAYLOAD, f"see [x](javascript:alert(1)) and ![i](http://e/x.png) {PAYLOAD}", "$$x$$ {{v}} `c`"):
        out = md_text(text)
        no_live_tag(out)
        assert "](" not in out.replace("\\](", "")  # link syntax is neutralised
    answer = answer_of(f"{PAYLOAD} [MLD-1].", [citation("MLD-1", PAYLOAD)], [PAYLOAD])
    out = render_answer(answer, number_citations(answer.text, answer.citations))
    no_live_tag(out)
    assert "&lt;img src=x onerror=alert(1)&gt;" in out


# --- cards -----------------------------------------------------------------------------------


def concept(definition: str = "A processor designed for highly parallel workloads.") -> Entry:
    fields = {
        "definition": definition,
        "example": "Accelerate neural-network training.",
        "caveat": "Available memory matters alongside compute speed.",
        "aliases": ["Graphics processing unit"],
        "technology": [{"name": "NCCL", "description": "NVIDIA collective-communication library."}],
    }
    return Entry("TST-0001", "concept", "GPU", f"GPU\n{definition}", fields, "x.txt:1", None)


def test_card_escapes_entry_text():
    entry = Entry(
        "TST-0001",
        "concept",
        f"XSS {PAYLOAD}",
        PAYLOAD,
        {
            "definition": f"Probe {PAYLOAD} text.",
            "example": PAYLOAD,
            "aliases": [PAYLOAD],
            "technology": [{"name": PAYLOAD, "description": PAYLOAD}],
        },
        "x.txt:1",
        "javascript:alert(1)",
    )
    html = entry_card(entry, f"Probe {PAYLOAD} text.", number=1)
    no_live_tag(html)
    assert "javascript:" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 5
    assert "<mark>Probe &lt;img src=x onerror=alert(1)&gt; text.</mark>" in html


def test_card_shows_concept_fields_and_highlights_the_quote():
    html = entry_card(concept(), "A processor designed for highly parallel workloads.", number=1)
    for text in (
        "GPU",
        "TST-0001",
        "concept",
        "Accelerate neural-network training.",
        "Graphics processing unit",
        "NCCL",
        "NVIDIA collective-communication library.",
    ):
        assert text in html
    assert "<mark>A processor designed for highly parallel workloads.</mark>" in html
    # the entry text prefixes field sentences ("Caveat: ...", "NCCL: ..."); the field still lights up
    assert "<mark>Available memory matters alongside compute speed" in highlight(
        "Available memory matters alongside compute speed.", "Caveat: Available memory matters alongside compute speed."
    )
    assert "<mark>NVIDIA collective-communication library" in entry_card(
        concept(), "NCCL: NVIDIA collective-communication library."
    )


def test_card_of_an_abstract_links_to_arxiv():
    entry = Entry(
        "arxiv:2401.12345",
        "abstract",
        "ServerlessLLM",
        "We present ServerlessLLM. It loads fast.",
        {"authors": ["A. Author"], "submit_date": "2024-01-20"},
        "a.jsonl:1",
        "https://arxiv.org/abs/2401.12345",
    )
    html = entry_card(entry, "It loads fast.", supported=False)
    assert 'href="https://arxiv.org/abs/2401.12345"' in html and 'rel="noopener noreferrer nofollow"' in html
    assert "<mark>It loads fast.</mark>" in html and "unverified" in html and "A. Author" in html


def test_missing_entry_card_is_friendly():
    assert "no longer in the index" in entry_card(None, entry_id=PAYLOAD)
    no_live_tag(entry_card(None, entry_id=PAYLOAD))


def test_sources_panel_is_escaped():
    html = sources_html([Source("TST-0001", "TST-0001::core:0", PAYLOAD, "concept", "text", 0.8123, 1)])
    no_live_tag(html)
    assert "0.81" in html and "TST-0001" in html


# --- export, feedback, API -------------------------------------------------------------------


def turn(question="What is a GPU?") -> Turn:
    answer = answer_of(
        "GPUs are parallel [MLD-0472].",
        [
            citation("MLD-0472", "GPU", "A processor designed for parallel work."),
            citation("arxiv:2401.12345", "ServerlessLLM", "Loads fast.", url="https://arxiv.org/abs/2401.12345"),
        ],
        model="extractive",
    )
    return Turn(question, answer, numbering=number_citations(answer.text, answer.citations))


def test_markdown_export_has_questions_answers_and_numbered_citations():
    md = conversation_markdown([turn(), Turn("Broken?", error="The model is down")], model="extractive (offline)")
    assert "## 1. What is a GPU?" in md and "GPUs are parallel [1]." in md
    assert "1. GPU — `MLD-0472`" in md and "> A processor designed for parallel work." in md
    assert "2. [ServerlessLLM](https://arxiv.org/abs/2401.12345)" in md
    assert "## 2. Broken?" in md and "The model is down" in md
    assert "model: extractive (offline)" in md


def test_feedback_line_is_appended(tmp_path):
    path = record_feedback(tmp_path / "home", turn(), "up")
    record_feedback(tmp_path / "home", turn("Second?"), "down")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert path == tmp_path / "home" / "feedback.jsonl"
    assert [line["vote"] for line in lines] == ["up", "down"]
    first = lines[0]
    assert first["question"] == "What is a GPU?" and first["answer"] == "GPUs are parallel [MLD-0472]."
    assert first["citations"][0] == {
        "entry_id": "MLD-0472",
        "quote": "A processor designed for parallel work.",
        "supported": True,
    }
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", first["timestamp"])


@pytest.mark.parametrize(
    ("liked", "vote"), [(True, "up"), (False, "down"), ("Like", "up"), ("Dislike", "down"), (None, None)]
)
def test_vote_of(liked, vote):
    assert vote_of(liked) == vote


def test_api_payload_is_json():
    answer = Answer(
        "q",
        "t [MLD-1]",
        [Citation("MLD-1", "T", "concept", None, "Quote.", True, 0.9)],
        [Source("MLD-1", "MLD-1::core:0", "T", "concept", "text", 0.9, 1)],
        False,
        "extractive",
        {"total": 1.5},
    )
    payload = json.loads(json.dumps(api_payload(answer)))
    assert payload == answer.to_dict()  # one way of turning an Answer into JSON
    assert payload["citations"] == [
        {
            "entry_id": "MLD-1",
            "title": "T",
            "kind": "concept",
            "url": None,
            "quote": "Quote.",
            "supported": True,
            "support": 0.9,
        }
    ]
    assert payload["sources"][0] | {"text": None} == {
        "entry_id": "MLD-1",
        "chunk_id": "MLD-1::core:0",
        "title": "T",
        "kind": "concept",
        "text": None,
        "score": 0.9,
        "rank": 1,
    }
    assert payload["refused"] is False and payload["model"] == "extractive" and payload["timings"] == {"total": 1.5}


def test_parse_history():
    assert parse_history(None) == [] and parse_history([]) == []
    assert parse_history([["user", "hi"], ("assistant", "hello")]) == [("user", "hi"), ("assistant", "hello")]
    assert parse_history([{"role": "user", "content": "hi"}]) == [("user", "hi")]
    for bad in ("text", [["system", "x"]], [["user"]], [["user", 3]]):
        with pytest.raises(ValueError):
            parse_history(bad)


def test_parse_auth():
    from assistant.errors import SettingsError
    from ui.app import parse_auth

    assert parse_auth(None) is None and parse_auth("user:p:w") == ("user", "p:w")
    with pytest.raises(SettingsError):
        parse_auth("nopassword")


# --- handlers over a real index (no server) ----------------------------------------------------


def run(handler, *args):
    return list(handler(*args))


def test_respond_streams_then_shows_verified_answer_with_chips(seed_assistant):
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    steps = run(h.respond, "What is a GPU?", session, "Both")
    assert len(steps) >= 3  # the question, at least one streamed delta, the final answer
    streamed = steps[1][0][-1]["content"]
    assert streamed and "▍" not in streamed  # no cursor: each update appends to the last one
    final_messages = steps[-1][0]
    assert [m["role"] for m in final_messages] == ["user", "assistant"]
    assert "[1] GPU</span>" in final_messages[1]["content"] and "[MLD-0472]" not in final_messages[1]["content"]
    answer = session.turns[0].answer
    assert answer.citations[0].entry_id == "MLD-0472"
    card = h.card(session, "MLD-0472")
    assert "<mark>" in card and "GPU" in card and "Graphics processing unit" in card
    # a follow-up sends the earlier turn as history
    run(h.respond, "What caveat does it have?", session, "Both")
    assert len(session.turns) == 2 and session.turns[1].answer is not None


def test_filter_restricts_what_the_answer_draws_on(seed_assistant):
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    run(h.respond, "What is a GPU?", session, "Abstracts")
    answer = session.turns[0].answer
    assert answer.sources and all(s.kind == "abstract" for s in answer.sources)
    assert all(c.kind == "abstract" for c in answer.citations)
    html, _ = h.refilter(session, "Abstracts")
    assert "MLD-0472" not in html and "(abstracts only)" in html
    run(h.respond, "What is a GPU?", session, "Concepts")
    answer = session.turns[1].answer
    assert answer.sources and all(s.kind == "concept" for s in answer.sources)
    assert answer.citations[0].entry_id == "MLD-0472"


def test_errors_become_friendly_messages(seed_settings, caplog):
    from assistant import Assistant
    from assistant.errors import ModelError
    from assistant.models import StubChatModel
    from ui.handlers import ChatHandlers, new_session
    from ui.render import GENERIC_ERROR

    down = ModelError("The chat model at http://127.0.0.1:9/v1 could not be reached - start it")
    h = ChatHandlers(Assistant(seed_settings, model=StubChatModel(errors=[down, RuntimeError("secret boom"), down])))
    session = new_session()
    last = run(h.respond, "What is a GPU?", session, "Both")[-1][0][-1]["content"]
    assert "could not be reached" in last and "Traceback" not in last
    last = run(h.respond, "   ", session, "Both")[-1][0][-1]["content"]
    assert "The question is empty" in last
    last = run(h.respond, "What is a GPU?", session, "Both")[-1][0][-1]["content"]
    assert "secret boom" not in last and md_text(GENERIC_ERROR)[:30] in last
    assert "secret boom" in caplog.text  # logged server-side
    assert h.chat_api("What is a GPU?", []) == {"error": str(down)}
    assert "error" in h.chat_api("What is a GPU?", [["robot", "hi"]])


def test_empty_index_and_cut_off_stream_are_friendly(seed_settings, tmp_path):
    from assistant import Assistant, Settings
    from assistant.models import StreamCutOffError, StubChatModel
    from ui.handlers import ChatHandlers, new_session

    empty = Assistant(
        Settings(home=tmp_path / "empty", knowledge=(tmp_path / "none",), model="extractive"), auto_index=False
    )
    session = new_session()
    last = run(ChatHandlers(empty).respond, "What is a GPU?", session, "Both")[-1][0][-1]["content"]
    assert "assistant index" in last and "answer-error" in last
    assert "error" in ChatHandlers(empty).chat_api("What is a GPU?")

    cut = Assistant(seed_settings, model=StubChatModel(errors=[StreamCutOffError("GPUs are <b>fast")]))
    last = run(ChatHandlers(cut).respond, "What is a GPU?", session, "Both")[-1][0][-1]["content"]
    assert "cut off" in last and "GPUs are &lt;b&gt;fast" in last

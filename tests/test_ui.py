"""The chat UI's pure helpers and handlers, without a server: header, examples, citations, cards, sources,
filter, retry, export, feedback, errors."""

from __future__ import annotations

import json
import re

import pytest

from assistant.types import Answer, Citation, Entry, Source
from tests.conftest import REPO
from ui.cards import entry_card, highlight
from ui.ratings import conversation_markdown, record_feedback, vote_of
from ui.render import (
    api_payload,
    md_text,
    number_citations,
    parse_history,
    render_answer,
    render_partial,
    render_text,
)
from ui.session import Turn
from ui.sources import sources_html

PAYLOAD = "<img src=x onerror=alert(1)>"


def citation(entry_id: str, title: str, quote: str = "A quote.", supported: bool = True, url=None) -> Citation:
    return Citation(entry_id, title, "concept", url, quote, supported)


def answer_of(text: str, citations: list[Citation], notes: list[str] | None = None, **more) -> Answer:
    return Answer("q", text, citations, notes=notes or [], **more)


def no_live_tag(html: str) -> None:
    assert "<img" not in html.lower() and "<script" not in html.lower()


# --- citation numbers -----------------------------------------------------------------------------------


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


def test_markers_become_citation_numbers():
    text = "GPUs are parallel [MLD-0472]. Papers agree [abs-0123456789, MLD-0472]."
    numbering = number_citations(text, [citation("MLD-0472", "GPU"), citation("abs-0123456789", "Paper")])
    out = render_text(text, numbering)
    assert "MLD-0472]" not in out and "[abs-" not in out
    assert re.findall(r">\[(\d)\]<", out) == ["1", "2", "1"]
    assert "cite-id-MLD-0472" in out  # the click target names the entry


def test_partial_stream_hides_a_marker_still_arriving():
    out = render_partial("GPUs are parallel [MLD-0472]. More [MLD-04")
    assert ">[1]<" in out and "MLD-04" not in out.replace("cite-id-MLD-0472", "")


def test_answer_message_shows_citations_once_as_numbers_and_marks_unverified():
    answer = answer_of(
        "GPUs are parallel [MLD-0472]. Maybe [abs-0123456789].",
        [citation("MLD-0472", "GPU"), citation("abs-0123456789", "A paper", supported=False)],
        ["Unverified citation removed - abs-0123456789 does not support: x"],
    )
    numbering = number_citations(answer.text, answer.citations)
    out = render_answer(answer, numbering, turn=3)
    # one display: the inline numbers (tap targets naming entry and turn), no chip row repeating them
    assert re.findall(r">\[(\d)\]<", out) == ["1", "2"]
    assert "cite-chip" not in out and "GPU</span>" not in out
    assert "cite-turn-3" in out and "cite-id-MLD-0472" in out
    assert re.search(r'class="cite-ref cite-id-abs-0123456789 cite-turn-3 unverified"', out)
    assert "Unverified citation removed" in out


def test_a_refusal_under_a_filter_says_what_was_searched():
    refused = answer_of("I cannot answer that from the knowledge base.", [], refused=True)
    assert "Only concepts were searched" in render_answer(refused, {}, kind="concept")
    assert "Only paper abstracts were searched" in render_answer(refused, {}, kind="abstract")
    assert "searched" not in render_answer(refused, {}, kind=None)
    answered = answer_of("GPUs [MLD-0472].", [citation("MLD-0472", "GPU")])
    numbering = number_citations(answered.text, answered.citations)
    assert "searched" not in render_answer(answered, numbering, kind="concept")


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
    html = sources_html([Source("TST-0001", "TST-0001::core:0", PAYLOAD, "concept", "text", 0.8123, 1)], turn=0)
    no_live_tag(html)
    assert "&lt;img" in html and "TST-0001" in html


def test_sources_panel_ranks_marks_citations_and_rows_open_entries():
    sources = [
        Source("MLD-0472", "MLD-0472::core:0", "GPU", "concept", "t", 1.0, 1),
        Source("abs-0123456789", "abs-0123456789::0", "A paper", "abstract", "t", 0.96, 2),
        Source("abs-9999999999", "abs-9999999999::0", "Other", "abstract", "t", 0.5, 3),
    ]
    html = sources_html(
        sources, None, numbering={"abs-0123456789": 1, "MLD-0472": 2}, turn=4, unverified=frozenset({"MLD-0472"})
    )
    # no unexplained score: a rank, and the citation number of the entries the answer cites
    assert "0.96" not in html and "score" not in html.lower() and "Best match first" in html
    rows = re.findall(r'<tr class="src-row cite-id-([^ ]+) cite-turn-4" tabindex="0"', html)
    assert rows == ["MLD-0472", "abs-0123456789", "abs-9999999999"]
    assert '<span class="cited unverified">[2]</span>' in html and '<span class="cited">[1]</span>' in html
    assert "Searched: <b>all the knowledge</b>" in html and "applies to the next question" not in html
    # the filter changed after the answer: the panel keeps the answer's own scope and says so
    html = sources_html(sources[:1], "concept", turn=0, filter_kind="abstract")
    assert "Searched: <b>concepts only</b>" in html
    assert "paper abstracts only</span>" not in html and "paper abstracts only, applies to the next question" in html
    assert "No sources yet" in sources_html([])


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


def test_respond_streams_then_shows_verified_answer(seed_assistant):
    from ui.handlers import OUTPUTS, ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    steps = run(h.respond, "What is a GPU?", session, "Both")
    assert len(steps) >= 3 and all(len(step) == OUTPUTS for step in steps)  # question, deltas, final answer
    streamed = steps[1][0][-1]["content"]
    assert streamed and "▍" not in streamed  # no cursor: each update appends to the last one
    final_messages, _, box, panel, card, widen = steps[-1]
    assert [m["role"] for m in final_messages] == ["user", "assistant"] and box == ""
    assert ">[1]</span>" in final_messages[1]["content"] and "[MLD-0472]" not in final_messages[1]["content"]
    assert "cite-id-MLD-0472 cite-turn-0" in panel and '<span class="cited">[1]</span>' in panel
    assert widen["visible"] is False
    answer = session.turns[0].answer
    assert answer.citations[0].entry_id == "MLD-0472"
    # a tap on the marker (forwarded by the bridge as "turn|id|nonce") opens the card with its quote
    _, panel, card = h.open_target("0|MLD-0472|123", session, "Both")
    assert "<mark>" in card and "GPU" in card and "Graphics processing unit" in card and 'class="card-close"' in card
    # a follow-up sends the earlier turn as history
    run(h.respond, "What caveat does it have?", session, "Both")
    assert len(session.turns) == 2 and session.turns[1].answer is not None
    # a source row of the first answer selects that answer again
    _, panel, card = h.open_target("0|abs-eb18b51aef|9", session, "Both")
    assert session.selected == 0 and "cite-turn-0" in panel and "no longer in the index" not in card


def test_filter_the_panel_and_the_answer_agree(seed_assistant):
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    panel = run(h.respond, "What is a GPU?", session, "Concepts")[-1][3]
    answer = session.turns[0].answer
    assert answer.sources and all(s.kind == "concept" for s in answer.sources)
    assert answer.citations[0].entry_id == "MLD-0472"
    listed = re.findall(r"cite-id-([^ ]+) cite-turn", panel)
    assert listed and all(seed_assistant.entry(e).kind == "concept" for e in listed) and "concepts only" in panel
    # the filter set to Abstracts afterwards: the panel still lists this answer's concepts, labelled as such
    panel = h.refilter(session, "Abstracts")
    assert "Searched: <b>concepts only</b>" in panel and "applies to the next question" in panel
    panel = run(h.respond, "What is a GPU?", session, "Abstracts")[-1][3]
    answer = session.turns[1].answer
    assert answer.sources and all(s.kind == "abstract" for s in answer.sources)
    assert all(c.kind == "abstract" for c in answer.citations)
    assert "MLD-0472" not in panel and "Searched: <b>paper abstracts only</b>" in panel


def test_a_refusal_under_a_filter_offers_to_search_everything(seed_assistant):
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    messages, _, _, panel, _, widen = run(h.respond, "What is NCCL used for?", session, "Abstracts")[-1]
    assert session.turns[0].answer.refused
    assert "Only paper abstracts were searched" in messages[-1]["content"] and widen["visible"] is True
    assert h.widen(session) == ("Both", "What is NCCL used for?")
    messages, _, _, panel, _, widen = run(h.respond, "What is NCCL used for?", session, "Both")[-1]
    assert not session.turns[1].answer.refused and "MLD-0472" in panel and widen["visible"] is False
    assert "searched" not in messages[-1]["content"]


def test_retry_asks_that_question_again_and_drops_what_followed(seed_assistant):
    import gradio as gr

    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    session = new_session()
    run(h.respond, "What is a GPU?", session, "Both")
    run(h.respond, "What is NCCL used for?", session, "Both")
    first = session.turns[0].answer
    steps = run(h.retry, session, "Both", gr.RetryData(None, {"index": 0, "value": "What is a GPU?"}))
    assert [t.question for t in session.turns] == ["What is a GPU?"]
    assert session.turns[0].answer is not first and session.turns[0].answer.citations
    assert [m["role"] for m in steps[-1][0]] == ["user", "assistant"]
    # a stale index (the conversation was cleared meanwhile) changes nothing
    steps = run(h.retry, session, "Both", gr.RetryData(None, {"index": 8, "value": "x"}))
    assert len(session.turns) == 1 and len(steps) == 1


def test_header_tells_the_knowledge_and_the_model(seed_assistant):
    from ui.handlers import ChatHandlers

    status = seed_assistant.status()
    entries = seed_assistant.entries.values()
    assert status.concepts == sum(e.kind == "concept" for e in entries) >= 1
    assert status.papers == sum(e.kind == "abstract" for e in entries) >= 1
    assert status.chunks >= status.entries and status.indexed_at and status.model == "extractive (offline)"
    assert status.knowledge == tuple(p.as_posix() for p in seed_assistant.settings.knowledge)
    html = ChatHandlers(seed_assistant).header()
    assert f"{status.concepts} concept" in html and f"{status.papers} papers" in html
    assert f"{status.chunks} chunks" in html and "knowledge/seed</code>" in html
    assert re.search(r"indexed \d{4}-\d\d-\d\d \d\d:\d\d UTC", html)
    assert "Model: <b>extractive (offline)</b>" in html and "not the configured knowledge" not in html


def test_header_warns_when_the_index_holds_other_knowledge_or_none():
    from assistant.types import KnowledgeStatus
    from ui.header import header_html

    other = KnowledgeStatus(("knowledge/mlsys",), ("knowledge/seed",), 1, 59, 63, "2026-01-02T03:04:05+0100", "m")
    html = header_html(other, "openai:qwen")
    assert "The index holds knowledge/seed, not the configured knowledge" in html
    assert "assistant index knowledge/mlsys" in html and "indexed 2026-01-02 02:04 UTC" in html
    assert "Offline mode" not in html and "Model: <b>openai:qwen</b>" in html
    empty = KnowledgeStatus(("k<b>",), (), 0, 0, 0, None, "extractive (offline)")
    html = header_html(empty, "extractive (offline)")
    assert "not indexed yet" in html and "k&lt;b&gt;" in html and "Offline mode" in html
    assert "unknown" in header_html(None, "m")


def entry(entry_id: str, kind: str, title: str, **fields) -> Entry:
    return Entry(entry_id, kind, title, title, fields)


def test_examples_come_from_the_knowledge_and_are_stable():
    from ui.examples import example_questions, topic_phrases

    entries = [
        entry("C-1", "concept", "Pipeline parallelism", definition="d", caveat="c"),
        entry("C-2", "concept", "KV cache (key-value cache)", definition="d"),
        entry("C-3", "concept", "A title far too long to be a good example button at all", definition="d"),
        entry("P-1", "abstract", "Faster LLM serving with paged memory"),
        entry("P-2", "abstract", "LLM serving at scale (LLMS) for everyone"),
        entry("P-3", "abstract", "Speculative decoding for LLM serving"),
        entry("P-4", "abstract", "Speculative decoding revisited"),
        entry("P-5", "abstract", "Large language models are everywhere"),
        entry("P-6", "abstract", "Large language models again"),
    ]
    assert topic_phrases(entries, 5) == ["LLM serving", "speculative decoding"]  # generic "large language" skipped
    expected = [
        "What is pipeline parallelism?",  # the richest concept page first, the heading's capital dropped
        "What is KV cache?",  # a parenthesised expansion left out
        "Which papers address LLM serving?",
        "Which papers address speculative decoding?",
    ]
    assert example_questions(entries) == expected
    assert example_questions(list(reversed(entries))) == expected  # order of reading does not matter
    only_papers = [e for e in entries if e.kind == "abstract"]
    assert example_questions(only_papers) == expected[2:]
    assert example_questions([e for e in entries if e.kind == "concept"]) == expected[:2]


def test_examples_read_as_questions_a_person_asks():
    from ui.examples import example_questions

    entries = [
        entry("glossary:operation", "concept", "Operation (op)", definition="A node in the graph."),
        entry("glossary:see", "concept", "TPU chip", definition="Abbreviation for Tensor Processing Unit chip."),
        Entry("MLD-1", "concept", "GPU", "A processor designed for parallel work.", {"definition": "A processor."}),
        Entry("MLD-2", "concept", "Gradient checkpointing", "Gradient checkpointing", {"definition": "A way to save."}),
        Entry("MLD-3", "concept", "Markov decision process", "A Markov decision process is a graph.", {}),
        entry("P-1", "abstract", "Dynamic parallelism allows GPU threads to launch threads"),
        entry("P-2", "abstract", "Dynamic parallelism allows GPU kernels to nest"),
        Entry("P-3", "abstract", "Memory", "We study the dynamic parallelism of GPUs.", {}),
    ]
    questions = example_questions(entries, count=5)
    assert questions == [
        "What is a GPU?",  # "A processor ..." is a thing one counts: the article is there
        "What is gradient checkpointing?",  # "A way to ..." under an -ing title is a practice: no article
        "What is a Markov decision process?",  # a name keeps its capital ("a Markov" in the knowledge)
        "Which papers address dynamic parallelism?",
    ]  # never a lone common word ("Operation"), a pointer page, or two words that are no phrase ("allows GPU")


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        (
            "seed",
            [
                "What is a GPU?",
                "Which papers address LLM inference?",
                "Which papers address distributed training?",
                "Which papers address dynamic parallelism?",
            ],
        ),
        (
            "mlsys",
            [
                "What is federated learning?",
                "What is reinforcement learning?",
                "Which papers address LLM inference?",
                "Which papers address LLM serving?",
            ],
        ),
    ],
)
def test_examples_of_the_shipped_knowledge(folder, expected):
    from assistant.knowledge.corpus import load_corpus
    from ui.examples import example_questions

    entries = list(load_corpus([REPO / "knowledge" / folder]).entries.values())
    assert example_questions(entries) == expected


def test_every_example_is_answered_on_the_seed_corpus(seed_assistant):
    from ui.handlers import ChatHandlers

    examples = ChatHandlers(seed_assistant).examples()
    assert len(examples) == 4 and any(q.startswith("What is") for q in examples)
    assert any(q.startswith("Which papers") for q in examples)
    for question in examples:
        answer = seed_assistant.ask(question)
        assert not answer.refused and answer.citations, (question, answer.text)


def test_handlers_never_show_a_traceback(seed_settings, caplog):
    from assistant import Assistant
    from ui.handlers import ChatHandlers, new_session

    class Broken(Assistant):
        def entry(self, entry_id):
            raise RuntimeError("secret entry boom")

        def status(self):
            raise RuntimeError("secret status boom")

        @property
        def entries(self):
            raise RuntimeError("secret entries boom")

    h = ChatHandlers(Broken(seed_settings))
    session = new_session()
    card = h.open_target("0|MLD-0472|1", session, "Both")[2]
    assert "no longer in the index" in card
    assert "Knowledge: <i>unknown</i>" in h.header() and h.examples() == []
    for html in (card, h.header()):
        assert "secret" not in html and "Traceback" not in html
    assert "secret entry boom" in caplog.text and "secret status boom" in caplog.text


def test_errors_become_friendly_messages(seed_settings, caplog):
    from assistant import Assistant
    from assistant.answer.models.text_reply import StubChatModel
    from assistant.errors import ModelError
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
    from assistant.answer.models import StreamCutOffError
    from assistant.answer.models.text_reply import StubChatModel
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

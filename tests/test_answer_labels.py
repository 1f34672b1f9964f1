"""What a small model reads and what its reply becomes: short entry labels mapped back to real ids,
brief contexts, the prompt's echo dropped, and the extractive fallback.

The knowledge is written by the tests (three glossary terms of a made-up serving stack), indexed for
real, and answered through the real chain with a scripted model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant import Answer, Assistant, Settings
from assistant.answer.chain import FALLBACK_NOTE, NO_VERIFIED_CLAIM, answer_prompt
from assistant.answer.context import pack_context
from assistant.answer.echo import ECHO_NOTE, echoes_instructions, without_echo
from assistant.answer.labels import stream_ids, to_ids
from assistant.answer.models import ChatModel
from assistant.answer.models.text_reply import StubChatModel
from assistant.errors import SettingsError
from assistant.index.chroma_index import Index
from assistant.tuning import RefusalSettings
from tests.context_blocks import parse_blocks

TERMS = {
    "glimmer cache": (
        "A glimmer cache keeps recently decoded attention pages in host memory. "
        "It lets a server resume a paused conversation without recomputing its prefix. "
        "Its pages are evicted oldest first when host memory runs short."
    ),
    "quill scheduler": (
        "A quill scheduler orders inference requests by the value their tenant pays. "
        "It holds spare replicas for premium traffic that is expected soon. "
        "Batch callers wait when the premium queue is long."
    ),
    "tallow quantization": (
        "Tallow quantization stores weights in four bits with one scale per group of 64. "
        "It halves memory traffic during decoding compared with eight-bit weights."
    ),
}
GLIMMER = "glossary:glimmer-cache"
QUILL = "glossary:quill-scheduler"


@pytest.fixture(scope="module")
def written_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("labels")
    knowledge = folder / "stack"
    knowledge.mkdir()
    records = [{"term": term, "definition": text, "related": []} for term, text in TERMS.items()]
    (knowledge / "terms.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    settings = Settings(
        home=folder / "home", knowledge=(knowledge,), model="extractive", refusal=RefusalSettings(clear_miss=0.0)
    )
    Index(settings).sync(progress=False)
    return settings.home, knowledge


@pytest.fixture
def settings(written_home: tuple[Path, Path]) -> Settings:
    home, knowledge = written_home
    return Settings(home=home, knowledge=(knowledge,), model="extractive", refusal=RefusalSettings(clear_miss=0.0))


def streamed(bot: Assistant, question: str) -> tuple[str, Answer]:
    parts = list(bot.stream(question))
    final = parts[-1]
    assert isinstance(final, Answer)
    return "".join(p for p in parts[:-1] if isinstance(p, str)), final


def test_label_markers_become_the_ids_they_stand_for() -> None:
    labels = {"1": GLIMMER, "2": QUILL}
    assert to_ids("Pages stay in host memory [1].", labels) == f"Pages stay in host memory [{GLIMMER}]."
    assert to_ids("Both [1, 2]. Again [2][1]. And [#2; 1].", labels) == (
        f"Both [{GLIMMER}, {QUILL}]. Again [{QUILL}][{GLIMMER}]. And [{QUILL}, {GLIMMER}]."
    )
    # a number no entry carries becomes an id the verifier drops; prose numbers and real ids stay
    assert to_ids("Made up [7]. Steps (1) and (2). Real [MLD-0472].", labels) == (
        "Made up [entry-7]. Steps (1) and (2). Real [MLD-0472]."
    )
    assert to_ids("Nothing to map [1].", {}) == "Nothing to map [1]."


def test_a_streamed_label_split_across_deltas_is_shown_as_its_id() -> None:
    labels = {"1": GLIMMER, "12": QUILL}
    deltas = ["It resumes chats [", "1", "]. It orders requests [1", "2]. A list [see", " below]."]
    out = list(stream_ids(deltas, labels))
    assert "".join(out) == f"It resumes chats [{GLIMMER}]. It orders requests [{QUILL}]. A list [see below]."
    assert not any("[1]" in part or "[12]" in part for part in out)
    # an unclosed bracket is not held back for ever: the text flows on past OPEN_LIMIT characters
    long = list(stream_ids(["a [", "b" * 40, " c"], labels))
    assert len(long) >= 2 and "".join(long) == "a [" + "b" * 40 + " c"


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 1000])
def test_a_quoted_blocks_brackets_stay_code_however_the_stream_cuts_it(cut: int) -> None:
    """`images[0]` and a config prompt's `[1]:2` inside a quoted block are code: rewritten as labels they no
    longer matched the page, and the block was removed as unverified."""
    labels = {"1": GLIMMER, "2": QUILL}
    reply = "Run it like this [1].\n```python\nresult = pipe(prompt).images[0]\nsize? [1]:2\n```\n[2]\nDone [1]."
    deltas = [reply[n : n + cut] for n in range(0, len(reply), cut)]
    out = "".join(stream_ids(deltas, labels))
    block = "```python\nresult = pipe(prompt).images[0]\nsize? [1]:2\n```"
    assert out == f"Run it like this [{GLIMMER}].\n{block}\n[{QUILL}]\nDone [{GLIMMER}].", out
    assert to_ids(out, labels) == out


def test_the_context_labels_entries_by_number_and_maps_each_to_its_id(settings: Settings) -> None:
    bot = Assistant(settings)
    sources = bot.search("How does a glimmer cache resume a paused conversation?")
    index = Index(settings)
    packed = pack_context(sources, index, settings.context_tokens)
    blocks = packed.blocks
    assert parse_blocks(packed.text) == blocks  # the offline model reads what the text shows
    assert [b.entry_id for b in blocks] == sorted({b.entry_id for b in blocks}, key=int)  # 1, 2, 3 in order
    assert {packed.labels[b.entry_id] for b in blocks} == set(packed.entries) == {s.entry_id for s in sources}
    assert packed.labels["1"] == sources[0].entry_id == GLIMMER
    assert "glossary:" not in packed.text  # the model reads labels only


def test_a_brief_context_keeps_the_heading_and_the_sentences_that_match_the_question(settings: Settings) -> None:
    question = "How does a glimmer cache resume a paused conversation?"
    sources = Assistant(settings).search(question)
    packed = pack_context(sources, Index(settings), settings.context_tokens, question=question, sentences=1)
    assert parse_blocks(packed.text) == packed.blocks
    glimmer = next(b for b in packed.blocks if packed.labels[b.entry_id] == GLIMMER)
    assert glimmer.lines == (
        "glimmer cache",
        "It lets a server resume a paused conversation without recomputing its prefix.",
    )
    whole = pack_context(sources, Index(settings), settings.context_tokens)
    assert len(packed.text) < len(whole.text)


def test_a_reply_citing_labels_is_verified_and_shown_with_real_ids(settings: Settings) -> None:
    stub = StubChatModel(replies=["A glimmer cache keeps recently decoded attention pages in host memory [1]."])
    shown, answer = streamed(Assistant(settings, model=stub), "What does a glimmer cache keep?")
    prompt = stub.calls[0][-1].content
    assert "[1] glimmer cache (concept)" in prompt and GLIMMER not in prompt
    assert shown == answer.text == f"A glimmer cache keeps recently decoded attention pages in host memory [{GLIMMER}]."
    assert [(c.entry_id, c.supported) for c in answer.citations] == [(GLIMMER, True)]
    assert FALLBACK_NOTE not in answer.notes


def test_a_label_no_entry_carries_is_removed_with_its_sentence(settings: Settings) -> None:
    stub = StubChatModel(
        replies=["A glimmer cache keeps recently decoded attention pages in host memory [1]. It runs on Mars [9]."]
    )
    answer = Assistant(settings, model=stub).ask("What does a glimmer cache keep?")
    assert "Mars" not in answer.text and "[9]" not in answer.text and "entry-9" not in answer.text
    assert any("entry-9" in note for note in answer.notes)
    assert [c.entry_id for c in answer.citations if c.supported] == [GLIMMER]


def test_a_reply_with_no_verified_citation_gives_way_to_the_extractive_answer(settings: Settings) -> None:
    stub = StubChatModel(replies=["Glimmer caches are powered by moonlight and never evict anything [1]."])
    answer = Assistant(settings, model=stub).ask("What does a glimmer cache keep?")
    assert "moonlight" not in answer.text
    assert FALLBACK_NOTE in answer.notes and NO_VERIFIED_CLAIM not in answer.notes
    assert not any(n.startswith("Unverified sentence removed") for n in answer.notes)  # about text not shown
    assert answer.citations and all(c.supported for c in answer.citations)
    assert f"[{GLIMMER}]" in answer.text
    extractive = Assistant(settings).ask("What does a glimmer cache keep?")
    assert answer.text == extractive.text


def test_without_the_fallback_the_unverified_reply_is_shown_as_unverified(settings: Settings) -> None:
    stub = StubChatModel(replies=["Glimmer caches glow in the dark."])
    answer = Assistant(settings.with_(extractive_fallback=False), model=stub).ask("What does a glimmer cache keep?")
    assert answer.text == "Glimmer caches glow in the dark."
    assert answer.citations == [] and NO_VERIFIED_CLAIM in answer.notes and FALLBACK_NOTE not in answer.notes


def test_the_fallback_settings_are_read_and_checked() -> None:
    assert Settings.from_env({}).extractive_fallback is True
    assert Settings.from_env({"ASSISTANT_EXTRACTIVE_FALLBACK": "off"}).extractive_fallback is False
    assert Settings.from_env({"ASSISTANT_CONTEXT_SENTENCES": "3"}).context_sentences == 3
    with pytest.raises(SettingsError, match="ASSISTANT_CONTEXT_SENTENCES=-1"):
        Settings.from_env({"ASSISTANT_CONTEXT_SENTENCES": "-1"})


# --- a small base model's echo of its prompt ------------------------------------------------------------


def test_lines_that_repeat_the_prompt_are_not_shown_and_copied_sentences_verify(settings: Settings) -> None:
    _role, system = answer_prompt(context="", question="q")[0]
    echo = (
        f"{system}\n\nContext entries:\n\n"
        "A glimmer cache keeps recently decoded attention pages in host memory [1]. "
        "It lets a server resume a paused conversation without recomputing its prefix [1].\n"
        "Question: What does a glimmer cache keep?"
    )
    answer = Assistant(settings, model=StubChatModel(replies=[echo])).ask("What does a glimmer cache keep?")
    assert ECHO_NOTE in answer.notes and FALLBACK_NOTE not in answer.notes
    assert "You answer questions" not in answer.text and "Context entries" not in answer.text
    assert "Question:" not in answer.text
    assert answer.text.startswith("A glimmer cache keeps recently decoded attention pages in host memory [")
    assert [c.entry_id for c in answer.citations if c.supported] == [GLIMMER]


def test_an_echo_is_taken_out_of_prose_and_a_quoted_block_is_left_as_written() -> None:
    code = "```python\nimport os\n\n\ndef main():\n    pass\n```"
    reply = f"Context entries:\n\n\nA claim [1].\n{code}\n[1]\n\n\n\nAnother claim [1]."
    text, echoed = without_echo(reply, {"Context entries:"})
    assert echoed and text == f"A claim [1].\n{code}\n[1]\n\nAnother claim [1]."
    assert without_echo(f"Context entries:\n{code}", set()) == (f"Context entries:\n{code}", False)


def test_a_reply_that_only_repeats_the_prompt_gives_way_to_the_extractive_answer(settings: Settings) -> None:
    stub = StubChatModel(replies=["Context entries:\n\nQuestion: What does a glimmer cache keep?\nAnswer:"])
    answer = Assistant(settings, model=stub).ask("What does a glimmer cache keep?")
    assert not answer.refused and ECHO_NOTE in answer.notes and FALLBACK_NOTE in answer.notes
    assert answer.citations and all(c.supported for c in answer.citations)


def test_a_rewrite_that_repeats_the_condense_instruction_is_not_searched_for(settings: Settings) -> None:
    instruction = "Rewrite the following question so that it can be understood without the conversation."
    assert echoes_instructions(instruction) and echoes_instructions("")
    assert not echoes_instructions("What evicts the pages of a glimmer cache?")
    stub = StubChatModel(replies=[instruction, "Its pages are evicted oldest first when host memory runs short [1]."])
    bot = Assistant(settings, model=ChatModel(stub, "stub", "stub", rewrites_followups=True))
    history = [("user", "What does a glimmer cache keep?"), ("assistant", f"Attention pages [{GLIMMER}].")]
    answer = bot.ask("and what evicts its pages?", history=history)
    assert len(stub.calls) == 2, "the rewrite was asked of the model"
    searched = [n for n in answer.notes if n.startswith("Searched for:")]
    assert searched and "Rewrite" not in searched[0] and "glimmer cache" in searched[0]
    assert [c.entry_id for c in answer.citations if c.supported] == [GLIMMER]

"""Unicode that cannot fool, claims that swap who does what, and flagged sentences that are dropped.

Through `Assistant.ask` with a scripted model over a real index of knowledge the test writes (real
glossary terms and the GPU page), and once through the CLI and the chat UI against the fake
OpenAI server: a look-alike marker is the citation it looks like, a lie spelt with look-alike
letters is dropped with a note, a question spelt with them is read as it looks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.answer.models.text_reply import StubChatModel
from assistant.index.chroma_index import Index
from assistant.verify.unicode import plain
from tests.conftest import SEED, write_glossary

GPU = "A GPU is a processor designed for highly parallel workloads"
CYRILLIC_O, CYRILLIC_M = "\u043e", "\u041c"


@pytest.fixture(scope="module")
def written_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[Path, ...]]:
    """An index of knowledge written here: the GPU page and two glossary terms."""
    root = tmp_path_factory.mktemp("lookalikes")
    pages = root / "pages"
    pages.mkdir()
    shutil.copy(next(SEED.glob("000_*.txt")), pages / "gpu.txt")
    glossary = write_glossary(root / "glossary", {"regularization rate", "Q-function"})
    knowledge = (pages, glossary)
    Index(Settings(home=root / "home", knowledge=knowledge)).sync(progress=False)
    return root / "home", knowledge


def bot_saying(home: tuple[Path, tuple[Path, ...]], tmp_path: Path, *replies: str) -> Assistant:
    copy = tmp_path / "home"
    shutil.copytree(home[0], copy)
    return Assistant(
        # the reply's own sentences are what is verified here, so no extractive fallback replaces them
        Settings(home=copy, knowledge=home[1], model="extractive", extractive_fallback=False),
        model=StubChatModel(replies=list(replies)),
    )


@pytest.mark.parametrize(
    "marker",
    [f"[{CYRILLIC_M}LD-0472]", "\uff3bMLD-0472\uff3d", "[MLD-\u200b0472]", "[MLD\u20130472]"],
    ids=["cyrillic M", "fullwidth brackets", "zero-width space", "en dash"],
)
def test_a_look_alike_marker_is_the_citation_it_looks_like(written_home, tmp_path: Path, marker: str) -> None:
    answer = bot_saying(written_home, tmp_path, f"{GPU} {marker}.").ask("What is a GPU?")
    assert answer.text == f"{GPU} [MLD-0472]."
    assert [(c.entry_id, c.supported) for c in answer.citations] == [("MLD-0472", True)]


def test_a_marker_like_token_of_no_entry_is_removed_and_noted(written_home, tmp_path: Path) -> None:
    reply = f"{GPU} [MLD-0472]. GPUs were invented in 1850 [MLD-O472]."
    answer = bot_saying(written_home, tmp_path, reply).ask("What is a GPU?")
    assert answer.text == f"{GPU} [MLD-0472]."
    assert "Removed citations of ids that were not in the context: MLD-O472" in answer.notes


@pytest.mark.parametrize(
    ("lie", "said"),
    [
        (f"A GPU is n{CYRILLIC_O}t designed for highly parallel workloads", "not"),
        ("CUDA is an \uff21\uff2d\uff24 GPU programming platform", "AMD"),
        ("A GPU is n\u0336o\u0336t\u0336 designed for highly parallel workloads", "not"),
        ("A GPU is \U0001d427\U0001d428\U0001d42d designed for highly parallel workloads", "not"),
    ],
    ids=["cyrillic o in not", "fullwidth AMD", "combining overlay", "mathematical bold"],
)
def test_a_lie_in_look_alike_letters_is_dropped_with_a_note(written_home, tmp_path: Path, lie: str, said: str) -> None:
    answer = bot_saying(written_home, tmp_path, f"{lie} [MLD-0472]. {GPU} [MLD-0472].").ask("What is a GPU?")
    assert answer.text == f"{GPU} [MLD-0472]."  # what is shown: the verified sentence, in plain letters
    removed = [n for n in answer.notes if n.startswith("Unverified sentence removed - MLD-0472 does not support")]
    assert len(removed) == 1 and said in removed[0] and plain(lie) in removed[0]


@pytest.mark.parametrize(
    ("claim", "entry", "kept"),
    [
        ("Neural-network training accelerates GPUs", "MLD-0472", False),
        ("GPUs accelerate neural-network training", "MLD-0472", True),
        ("Raising overfitting reduces the regularization rate", "glossary:regularization-rate", False),
        ("Raising the regularization rate reduces overfitting", "glossary:regularization-rate", True),
        ("The expected return is predicted by the Q-function", "glossary:q-function", True),
    ],
)
def test_a_claim_that_swaps_who_does_what_is_not_verified(
    written_home, tmp_path: Path, claim: str, entry: str, kept: bool
) -> None:
    question = {"MLD-0472": "What is a GPU?", "glossary:q-function": "What is the Q-function?"}
    answer = bot_saying(written_home, tmp_path, f"{claim} [{entry}].").ask(
        question.get(entry, "What is the regularization rate?")
    )
    assert (claim in answer.text) is kept
    assert any(c.entry_id == entry and c.supported is kept for c in answer.citations)
    if not kept:
        assert any("the other way round" in note for note in answer.notes), answer.notes


def test_a_reply_of_flagged_sentences_only_shows_none_of_them(written_home, tmp_path: Path) -> None:
    answer = bot_saying(written_home, tmp_path, "Neural-network training accelerates GPUs [MLD-0472].").ask(
        "What is a GPU?"
    )
    assert "accelerates" not in answer.text and "supported by the entries it cited" in answer.text


def test_a_question_in_look_alike_letters_is_read_as_it_looks(written_home, tmp_path: Path) -> None:
    bot = bot_saying(written_home, tmp_path)
    plain_question = "How much does a GPU cost per hour?"
    disguised = plain_question.replace("cost", f"c{CYRILLIC_O}st").replace("GPU", "\uff27\uff30\uff35")
    expected, answer = bot.ask(plain_question), bot.ask(disguised + "\u200b")
    assert expected.refused and answer.refused and answer.text == expected.text
    assert answer.question == plain_question


LIE = f"GPUs are n{CYRILLIC_O}t designed for highly parallel workloads [{CYRILLIC_M}LD-0472]."


def test_the_cli_the_api_and_the_ui_show_the_same_text_without_the_flagged_lie(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assistant.cli.commands import main
    from tests.fake_openai import FakeOpenAI, Reply
    from ui.handlers import ChatHandlers, new_session

    with FakeOpenAI(default=Reply(f"{LIE} {GPU} [MLD-0472].")) as fake:
        env = {
            "ASSISTANT_HOME": str(seed_settings.home),
            "ASSISTANT_KNOWLEDGE": str(SEED),
            "ASSISTANT_MODEL": "openai:test",
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "sk-test",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert main(["ask", "What is a GPU?"]) == 0
        cli = capsys.readouterr().out
        handlers = ChatHandlers(Assistant(Settings.from_env()))
        api = handlers.chat_api("What is a GPU?", [])
        session = new_session()
        shown = list(handlers.respond("What is a GPU?", session, "Both"))[-1][0][-1]["content"]
    expected = f"{GPU} [MLD-0472]."
    assert api["text"] == expected and session.turns[0].answer.text == expected
    assert cli.startswith(f"{GPU} [1].\n")  # the CLI numbers its markers; the list below names MLD-0472
    assert "[1] GPU (MLD-0472)" in cli
    answer_part = cli.partition("\n\n")[0]  # then the citations, and notes that name what was removed
    assert "note: Unverified sentence removed - MLD-0472 does not support: GPUs are not designed" in cli
    body, _, notes = shown.partition('<span class="answer-note">')  # the answer, then its notes
    assert "Unverified sentence removed" in notes
    for text in (answer_part, api["text"], body):
        assert "designed for highly parallel workloads" in text  # the verified sentence
        assert "not designed" not in text and f"n{CYRILLIC_O}t" not in text  # never the flagged one
    assert any(n.startswith("Unverified sentence removed") for n in api["notes"])

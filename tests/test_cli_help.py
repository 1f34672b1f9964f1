"""The command line introduces itself: the bare command lists the commands, every option has help,
errors name the valid values, the answer's markers and its citation list share numbers, and an
empty question is refused before anything is indexed or loaded."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from assistant.cli.answer_text import citation_numbers, format_answer, numbered_text
from assistant.cli.commands import build_parser
from assistant.types import Answer, Citation, Source
from tests.test_robust_index import FAKE, Home, assert_one_line, cli, run  # noqa: F401

COMMANDS = ("index", "doctor", "ask", "chat", "serve", "eval", "bench")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_the_bare_command_lists_every_command_on_one_line_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *[])
    assert code == 0 and err == ""
    listed = {m.group(1): m.group(2) for m in re.finditer(r"^  (\w+) +(\S.*)$", out, re.M)}
    assert set(COMMANDS) <= set(listed), out
    assert "COMMAND --help" in out  # says how to learn a command's options
    for name in COMMANDS:
        summary = listed[name]
        assert subcommands()[name].description.startswith(summary[0].upper() + summary[1:] + "."), name


def test_every_option_of_every_command_has_help() -> None:
    for name, parser in subcommands().items():
        assert parser.description, name
        for action in parser._actions:
            assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
    index_help = next(a.help for a in subcommands()["index"]._actions if a.dest == "paths")
    for fmt in ("concept pages", "related-paper pages", "JSON Lines", "Markdown", "text", "HTML", "PDF"):
        assert fmt in index_help, fmt
    questions = next(a.help for a in subcommands()["eval"]._actions if a.dest == "questions")
    assert "JSON Lines" in questions and "seed.jsonl" in questions


def test_command_help_prints_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--help")
    assert code == 0 and "name the command that repairs it" in out


def test_an_unknown_model_is_one_line_naming_the_models(cli: Home, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    code, out, err = run(capsys, "ask", "What is a GPU?", "--model", "foo")
    assert code == 1 and out == ""
    assert_one_line(err, "--model 'foo'", "auto", "extractive", "stub", "openai:<model>")
    assert "ASSISTANT_MODEL" not in err  # the flag was given: the flag is what to fix


@pytest.mark.parametrize(
    ("variable", "value", "names"),
    [
        ("ASSISTANT_RETRIEVAL", "fuzzy", ("ASSISTANT_RETRIEVAL='fuzzy'", "hybrid", "dense", "lexical")),
        ("ASSISTANT_RERANK", "colbert", ("ASSISTANT_RERANK='colbert'", "learned", "maxsim", "off")),
        ("ASSISTANT_MODEL", "gpt", ("ASSISTANT_MODEL", "auto", "extractive", "stub", "openai:<model>")),
    ],
)
def test_an_unknown_setting_is_one_line_naming_its_values(
    cli: Home,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    names: tuple[str, ...],
) -> None:
    monkeypatch.setenv(variable, value)
    code, _, err = run(capsys, "ask", "What is a GPU?")
    assert code == 1
    assert_one_line(err, *names)


def test_argument_errors_are_one_line_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, names in (
        (["eval", "--split", "half"], ("calibration", "test", "assistant eval --help")),
        (["eval", "--modes", "hybrid,fuzzy"], ("'hybrid,fuzzy'", "hybrid", "dense", "lexical", "langchain")),
        (["frobnicate"], ("index", "ask", "assistant --help")),
        (["ask"], ("question", "assistant ask --help")),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "", argv
        assert_one_line(err, *names)


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_refused_before_any_indexing(
    question: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("ASSISTANT_HOME", str(home))
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(Path(__file__).resolve().parent.parent / "knowledge" / "seed"))
    code, out, err = run(capsys, "ask", question)
    assert code == 1 and out == ""
    assert_one_line(err, "empty", 'assistant ask "')
    assert not home.exists()  # no index, no lock, no manifest: nothing was built or loaded


def citation(entry_id: str, title: str, quote: str = "q", supported: bool = True) -> Citation:
    return Citation(entry_id, title, "abstract", None, quote, supported)


def test_markers_and_the_citation_list_share_numbers_as_the_chat_ui_numbers_them() -> None:
    from ui.render import number_citations

    text = (
        "Paging helps [arxiv:2309.06180]. Batching helps too [MLD-0472, arxiv:2309.06180]. "
        "A marker of an entry that is not a citation [abs-0123456789] is left out."
    )
    citations = [citation("MLD-0472", "GPU"), citation("arxiv:2309.06180", "vLLM"), citation("glossary:kv", "KV")]
    numbering = citation_numbers(text, citations)
    assert numbering == {"arxiv:2309.06180": 1, "MLD-0472": 2, "glossary:kv": 3}
    assert numbering == number_citations(text, citations)  # the terminal and the chat UI agree
    assert numbered_text(text, numbering) == (
        "Paging helps [1]. Batching helps too [2][1]. A marker of an entry that is not a citation  is left out."
    )
    shown = format_answer(Answer("q", text, citations, model="stub")).splitlines()
    assert shown[2:4] == ["[1] vLLM (arxiv:2309.06180)", '    "q"']  # the list in number order, id after title
    assert shown[4] == "[2] GPU (MLD-0472)" and shown[6] == "[3] KV (glossary:kv)"


def test_titles_quotes_and_nearest_entries_are_shown_without_tex() -> None:
    title = r"Solving ${\bf A} {\bf x} = {\bf b}$ on a GPU"
    answer = Answer(
        "q",
        "I cannot answer that.",
        [citation("abs-1", title, r"A $4\times$ speedup.")],
        sources=[Source("abs-1", "abs-1#0", title, "abstract", "t", 0.5, 1)],
        refused=True,
    )
    shown = format_answer(answer)
    assert "[1] Solving A x = b on a GPU (abs-1)" in shown and '"A 4× speedup."' in shown
    assert "Nearest entries: Solving A x = b on a GPU (abs-1)" in shown
    assert "$" not in shown and "\\" not in shown


def test_ask_prints_numbers_in_the_text_and_the_same_numbers_in_the_list(
    cli: Home,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "ask", "What is a GPU?")
    assert code == 0, err
    text, _, listing = out.partition("\n\n")
    assert "MLD-0472" not in text and "[1]" in text  # the id became its number
    in_text = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    listed = {int(m.group(1)): m.group(2) for m in re.finditer(r"^\[(\d+)\] (.+) \((\S+)\)$", listing, re.M)}
    assert in_text and in_text <= set(listed), out
    assert listed[1] == "GPU"
    code, out, _ = run(capsys, "ask", "What is a GPU?", "--json")  # --json keeps the ids
    answer = json.loads(out)
    assert code == 0 and "[MLD-0472]" in answer["text"] and answer["citations"][0]["entry_id"] == "MLD-0472"

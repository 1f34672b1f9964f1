"""Code, commands, configs and tables stay blocks: read whole, chunked whole, quoted verbatim, verified
against the entry, and shown as code by the terminal and the chat UI.

Real readers, the real chunker and, for answers, a real index (Chroma, the shipped encoder) over
small documents written here.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant import Assistant, Settings
from assistant.answer.context import Block
from assistant.answer.labels import to_ids
from assistant.answer.models.extractive import extract_answer
from assistant.blocks import as_block, is_block, quoted_in, row_quotes, units
from assistant.cli.answer_text import format_answer
from assistant.index.chunking import Chunker
from assistant.knowledge.documents import document_entries
from assistant.knowledge.html_reader import read_html
from assistant.knowledge.markdown_reader import read_markdown
from assistant.knowledge.text_reader import read_text_document
from assistant.question.reading import Reading
from assistant.text import split_sentences
from assistant.tuning import OfflineAnswerSettings
from assistant.types import Answer, Citation, Entry
from assistant.verify.citations import verify
from assistant.verify.unicode import plain
from ui.render import render_text

SETUP = """---
title: Feature server setup
---

# Feature server setup

Install the server with pip before anything else.

```bash
pip install 'featsrv[redis]'
featsrv init my_repo
```

## Configuration

The repository is configured in `featsrv.yaml`. A minimal configuration for Redis:

~~~yaml
project: my_repo
registry: data/registry.db
online_store:
    type: redis
    connection_string: localhost:6379
~~~

Before the first deployment:

- Create the repository
- Apply the definitions
- Materialize the features

## Connection options

The online store keeps a pool of connections to Redis.

| Option | Default | Description |
| --- | --- | --- |
| `pool_size` | 50 | Connections the server keeps open to the store |
| `idle_timeout` | 300 | Seconds before an idle connection is closed |
| `key_ttl_seconds` | 0 | Seconds before a stored key expires; 0 keeps keys forever |
"""

PAGE = """<html><head><title>Job scripts</title></head><body>
<h1>Job scripts</h1>
<p>A batch script names its resources in comment lines before the commands.</p>
<pre>
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --time=01:00:00

srun hostname
</pre>
<ul><li>Submit the script with sbatch</li><li>Watch the queue with squeue</li></ul>
<table>
<tr><th>Symbol</th><th>Meaning</th></tr>
<tr><td>%j</td><td>Job id</td></tr>
<tr><td>%u</td><td>User name</td></tr>
</table>
</body></html>
"""

NOTES = """Restarting the scheduler

The scheduler is restarted from the admin node once the queue has been drained,
after every running job has finished.

```
systemctl stop slurmctld

systemctl start slurmctld
```

- check the log
- tell the users
"""


def section_texts(document_text: str, reader) -> dict[str, str]:  # type: ignore[no-untyped-def]
    entries = document_entries(reader(document_text), "page", "page")
    return {entry.title: entry.text for entry in entries}


def test_markdown_keeps_code_yaml_and_tables_as_blocks_and_list_items_apart() -> None:
    texts = section_texts(SETUP, read_markdown)
    top = texts["Feature server setup"]
    assert "```bash\npip install 'featsrv[redis]'\nfeatsrv init my_repo\n```" in top
    config = next(text for title, text in texts.items() if title.endswith("Configuration"))
    assert "```yaml\nproject: my_repo\nregistry: data/registry.db\nonline_store:\n    type: redis\n" in config
    assert "Create the repository\nApply the definitions\nMaterialize the features" in config
    options = next(text for title, text in texts.items() if title.endswith("Connection options"))
    table = next(as_block(unit) for unit in units(options) if is_block(unit))
    assert table is not None and table.is_table
    assert table.lines[0] == "| Option | Default | Description |"
    assert table.lines[1] == "| pool_size | 50 | Connections the server keeps open to the store |"


def test_html_keeps_pre_as_code_tables_as_tables_and_list_items_apart() -> None:
    (text,) = section_texts(PAGE, read_html).values()
    blocks = [as_block(unit) for unit in units(text) if is_block(unit)]
    code, table = blocks
    assert code is not None and code.lines == (
        "#!/bin/bash",
        "#SBATCH --nodes=2",
        "#SBATCH --time=01:00:00",
        "",
        "srun hostname",
    )
    assert (
        table is not None
        and table.is_table
        and table.lines == ("| Symbol | Meaning |", "| %j | Job id |", "| %u | User name |")
    )
    assert "Submit the script with sbatch\nWatch the queue with squeue" in text


def test_markdown_reads_an_html_table_inside_it_as_a_table() -> None:
    texts = section_texts("# Page\n\nText.\n\n<table><tr><td>a</td><td>b</td></tr></table>\n", read_markdown)
    assert "```table\n| a | b |\n```" in texts["Page"]


def test_a_br_inside_a_markdown_table_cell_parts_its_words() -> None:
    table = (
        "# Page\n\n| Configuration | Example |\n|---|---|\n"
        "| `--offload_param`<br>`--offload_optimizer` | `true`<br/>`cpu` |\n"
    )
    texts = section_texts(table, read_markdown)
    assert "| --offload_param --offload_optimizer | true cpu |" in texts["Page"]


def test_text_notes_join_wrapped_lines_keep_fences_with_blank_lines_and_list_items() -> None:
    document = read_text_document(NOTES)
    (entry,) = document_entries(document, "notes.txt", "notes.txt")
    assert "once the queue has been drained, after every running job has finished." in entry.text
    assert "```\nsystemctl stop slurmctld\n\nsystemctl start slurmctld\n```" in entry.text
    assert entry.text.endswith("- check the log\n- tell the users")


HANDOVER = """On-call handover

Still open

1. Node kst-a17 (kestrel, pilot rack) has NVLink errors on GPU 3. Cordoned and drained on
   2025-07-10. Do not uncordon.
2. The webhook cert expired. Check its end date with
       kubectl -n kueue-system get secret webhook-cert -o jsonpath='{.data.tls\\.crt}' | openssl x509 -noout -enddate
   then force a renewal with
    cmctl renew -n kueue-system webhook-cert
   and tell the users, who can re-run the job with -v to see the log and then
   resubmit it.

Useful this week:
  kubectl get nodes -l gpu-flavor=h100 --field-selector spec.unschedulable=true
  mlp admin node-report --cluster kestrel
"""


def test_indented_shell_commands_in_text_notes_stay_lines_of_a_block() -> None:
    """Wrapped lines are joined, and an indented command was joined too: two commands became one line of a
    sentence ("... spec.unschedulable=true mlp admin node-report --cluster kestrel"), broken if copied. An
    indented line with a flag (or a `$ ` prompt) is a command; a list item's wrapped prose is not."""
    document = read_text_document(HANDOVER)
    texts = {section.heading: section.text for section in document.sections}
    assert "NVLink errors on GPU 3. Cordoned and drained on 2025-07-10. Do not uncordon." in texts["Still open"]
    assert (
        "```\ncmctl renew -n kueue-system webhook-cert\n```\nand tell the users, who can re-run the job with -v to "
        "see the log and then resubmit it." in texts["Still open"]
    )
    assert "Check its end date with\n```\nkubectl -n kueue-system get secret" in texts["Still open"]
    assert texts["Useful this week"] == (
        "```\nkubectl get nodes -l gpu-flavor=h100 --field-selector spec.unschedulable=true\n"
        "mlp admin node-report --cluster kestrel\n```"
    )


def test_a_block_is_one_sentence_and_a_list_item_its_own() -> None:
    texts = section_texts(SETUP, read_markdown)
    config = next(text for title, text in texts.items() if title.endswith("Configuration"))
    sentences = split_sentences(config)
    assert sum(is_block(s) for s in sentences) == 1
    assert "Create the repository" in sentences and "Apply the definitions" in sentences
    assert split_sentences("No block here. Two sentences.") == ["No block here.", "Two sentences."]


def entry_of(text: str, kind: str = "document") -> Entry:
    return Entry("doc:x.md#x", kind, "X", text, {}, "x.md:1", None)


def test_chunking_keeps_a_block_whole_when_it_fits() -> None:
    texts = section_texts(SETUP, read_markdown)
    config = next(text for title, text in texts.items() if title.endswith("Configuration"))
    chunks = Chunker(max_tokens=200).chunks(entry_of(config))
    yaml = next(unit for unit in units(config) if is_block(unit))
    assert any(yaml in chunk.text.split("\n", 1)[1] for chunk in chunks)


def test_chunking_cuts_a_long_block_at_lines_each_piece_fenced_a_table_with_its_header() -> None:
    code = "```python\n" + "\n".join(f"step_{n} = run(step_{n - 1}, retries=3)" for n in range(1, 80)) + "\n```"
    rows = "\n".join(f"| option_{n} | {n} | what option {n} does |" for n in range(60))
    table = f"```table\n| Option | Default | Description |\n{rows}\n```"
    for block_text in (code, table):
        block = as_block(block_text)
        assert block is not None
        chunks = Chunker(max_tokens=120).chunks(entry_of(f"Before the block.\n{block_text}\nAfter it."))
        pieces = [as_block(unit) for chunk in chunks for unit in units(chunk.text) if is_block(unit)]
        assert len(pieces) > 2
        for piece in pieces:
            assert piece is not None and piece.info == block.info
            assert quoted_in(piece, block_text)  # consecutive lines of the block (a table's rows under its header)
            if block.is_table:
                assert piece.lines[0] == "| Option | Default | Description |"
        shown = [line for piece in pieces for line in (piece.lines[1:] if block.is_table else piece.lines)]
        assert set(shown) == set(block.lines[1:] if block.is_table else block.lines)  # every line kept


@pytest.fixture(scope="module")
def docs_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    folder = tmp_path_factory.mktemp("docs")
    (folder / "setup.md").write_text(SETUP, encoding="utf-8")
    (folder / "jobs.html").write_text(PAGE, encoding="utf-8")
    home = tmp_path_factory.mktemp("home")
    bot = Assistant(Settings(home=home, knowledge=(folder,), model="extractive"), auto_index=False)
    bot.index(progress=False)
    return bot


def test_a_how_to_answer_quotes_the_sections_code_block_after_its_lead(docs_bot: Assistant) -> None:
    answer = docs_bot.ask("How do I configure the Redis online store in featsrv.yaml?")
    assert not answer.refused, answer.text
    yaml = (
        "```yaml\nproject: my_repo\nregistry: data/registry.db\nonline_store:\n"
        "    type: redis\n    connection_string: localhost:6379\n```"
    )
    assert yaml in answer.text, answer.text
    lead, _, after = answer.text.partition(yaml)
    assert lead.strip().endswith("].") and after.startswith("\n[doc:setup.md#"), answer.text  # lead, block, marker
    cited = {c.entry_id: c for c in answer.citations}
    assert cited["doc:setup.md#configuration"].supported  # the title "# Feature server setup" repeats is no level


def test_an_install_answer_quotes_the_command_verbatim(docs_bot: Assistant) -> None:
    answer = docs_bot.ask("How do I install the feature server?")
    assert "```bash\npip install 'featsrv[redis]'\nfeatsrv init my_repo\n```" in answer.text, answer.text


def test_a_table_is_quoted_by_its_matching_row_under_the_header_never_whole(docs_bot: Assistant) -> None:
    answer = docs_bot.ask("What is the default idle_timeout of a connection?")
    assert not answer.refused, answer.text
    assert answer.text.startswith("```table\n| Option | Default | Description |\n| idle_timeout | 300 |"), answer.text
    assert "key_ttl_seconds" not in answer.text, answer.text  # a row that shares no word with the question


def test_a_sentence_ending_with_a_colon_brings_its_list_items_each_its_own_line(docs_bot: Assistant) -> None:
    answer = docs_bot.ask("What should be done before the first deployment?")
    lines = answer.text.split("\n")
    start = next(n for n, line in enumerate(lines) if line.startswith("Before the first deployment:"))
    items = [line.split(" [", 1)[0] for line in lines[start + 1 : start + 4]]
    assert items == ["Create the repository", "Apply the definitions", "Materialize the features"], answer.text


def test_an_html_pre_is_quoted_line_for_line(docs_bot: Assistant) -> None:
    answer = docs_bot.ask("How do I write a batch script?")
    assert (
        "```\n#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=01:00:00\n\nsrun hostname\n```\n[doc:jobs.html#top]"
        in (answer.text)
    )
    assert not answer.text.startswith("```"), answer.text  # a sentence leads, the block follows it


ENTRY = Entry(
    "doc:setup.md#config",
    "document",
    "Setup › Config",
    "The configuration:\n```yaml\nports: [8080]\nhosts:\n  - a1\n```\n"
    "```table\n| Option | Default |\n| pool | 50 |\n| idle | 300 |\n```",
    {},
    "setup.md:1",
    None,
)


def test_a_quoted_block_verifies_when_the_entry_holds_it_verbatim() -> None:
    text = (
        "The configuration [doc:setup.md#config].\n```yaml\nports: [8080]\nhosts:\n  - a1\n```\n[doc:setup.md#config]"
    )
    verified = verify(text, {ENTRY.id: ENTRY})
    assert verified.text == text  # kept line for line: its indentation, and `[8080]` is no marker
    assert all(c.supported for c in verified.citations)


def test_a_block_the_entry_does_not_hold_is_dropped_with_a_note() -> None:
    text = "The configuration [doc:setup.md#config].\n```yaml\nports: [9090]\n```\n[doc:setup.md#config]"
    verified = verify(text, {ENTRY.id: ENTRY})
    assert "9090" not in verified.text and verified.text.startswith("The configuration")
    assert any("does not hold the quoted block" in note for note in verified.unsupported)


def test_a_table_quote_verifies_as_the_header_and_a_row_of_the_entrys_table() -> None:
    row = "```table\n| Option | Default |\n| idle | 300 |\n```\n[doc:setup.md#config]"
    assert verify(row, {ENTRY.id: ENTRY}).text == row
    invented = "```table\n| Option | Default |\n| idle | 30 |\n```\n[doc:setup.md#config]"
    assert "idle" not in verify(invented, {ENTRY.id: ENTRY}).text


def test_a_quoted_row_whose_long_cell_is_cut_verifies_as_the_user_reads_it() -> None:
    """A row's long cell is cut with "…"; the answer is checked as the user reads it, where NFKC spells the
    ellipsis "...", and the row was removed as one the entry does not hold."""
    long_cell = "Keep optimizer states in bf16 as well. " + "The offloaded state is about six bytes a parameter. " * 9
    table = f"```table\n| Option | Description | Default |\n| bf16_optimizer | {long_cell} | false |\n```"
    entry = replace(ENTRY, text=table)
    quote = row_quotes(as_block(units(entry.text)[0]))[0]  # type: ignore[arg-type]
    assert "…" in quote.text
    answer = f"{plain(quote.text)}\n[doc:setup.md#config]"
    assert "..." in answer and verify(answer, {entry.id: entry}).text == answer
    invented = answer.replace("bf16_optimizer", "fp16_optimizer")
    assert "optimizer" not in verify(invented, {entry.id: entry}).text


def test_labels_inside_a_block_are_code_not_citations() -> None:
    reply = "Set the ports [1].\n```yaml\nports: [1]\n```\n[1]"
    assert to_ids(reply, {"1": "doc:setup.md#config"}) == (
        "Set the ports [doc:setup.md#config].\n```yaml\nports: [1]\n```\n[doc:setup.md#config]"
    )


def answer_with(text: str) -> Answer:
    citation = Citation("doc:setup.md#config", "Setup › Config", "document", None, "The configuration:", True, 1.0)
    return Answer(question="q", text=text, citations=[citation], model="extractive")


def test_the_terminal_shows_a_block_indented_as_written_with_its_number() -> None:
    text = "Run it [doc:setup.md#config].\n```bash\necho $HOME \\\\alpha\n```\n[doc:setup.md#config]"
    shown = format_answer(answer_with(text))
    assert "Run it [1].\n    ```bash\n    echo $HOME \\\\alpha\n    ``` [1]\n" in shown, shown


def test_the_terminal_lines_up_a_quoted_tables_columns() -> None:
    text = (
        "Defaults [doc:setup.md#config].\n```table\n| Option | Default |\n| idle_timeout | 300 |\n```\n"
        "[doc:setup.md#config]"
    )
    shown = format_answer(answer_with(text))
    assert "    Option        Default\n    ------------  -------\n    idle_timeout  300 [1]" in shown, shown


def test_the_chat_shows_code_in_a_fence_and_a_table_as_a_table() -> None:
    text = (
        "Run it [doc:x#y].\n```bash\necho '<b>*hi*</b>' [x]\n```\n[doc:x#y]\n"
        "```table\n| A | B |\n| a_1 | *b* |\n```\n[doc:x#y]"
    )
    html = render_text(text, {"doc:x#y": 1})
    assert "\n\n```bash\necho '<b>*hi*</b>' [x]\n```\n\n" in html  # as written: the renderer escapes a fence
    assert "| A | B |\n| --- | --- |\n| a\\_1 | \\*b\\* |" in html  # cells escaped
    assert html.count('class="cite-ref') == 3 and "Run it " in html


def test_an_answer_quotes_at_most_two_rows_of_a_reference_table() -> None:
    rows = "\n".join(
        f"| {name}_timeout | {n} | seconds before the server gives up on a {name} |"
        for n, name in enumerate(["read", "write", "idle", "connect", "drain"], start=5)
    )
    table = f"```table\n| Option | Default | Description |\n{rows}\n```"
    block = Block(
        "doc:server.md#timeouts",
        "Server › Timeouts",
        "document",
        ("Server › Timeouts", "The server has five timeouts.", table),
    )
    answer = extract_answer(
        Reading("What timeouts does the server have, and their defaults?"), [block], OfflineAnswerSettings()
    )
    assert answer.count("```table") == 2, answer  # every row shares "timeout": the two that fit best are quoted
    assert "The server has five timeouts" in answer

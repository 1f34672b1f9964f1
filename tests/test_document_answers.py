"""A team's own notes answered as documents: values read in their own words, names asked of sections.

The wiki a new user brings (Markdown notes and a PDF plan), indexed for real and answered by the
offline model. Who / when / how / which questions are answered when the top section states a value of
the kind asked (`assistant.knowledge.stated_values`, spaCy's English pipeline), and refused when
nothing in the knowledge names what they ask about; answers never speak of concept pages or papers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pdf_fixture import write_pdf

from assistant import Assistant, Settings
from assistant.answer.chain import unstated
from assistant.answer.models.extractive import (
    Candidate,
    EntryView,
    Layout,
    close_alternative,
    extract_answer,
    quotable_units,
    states_a_figure,
)
from assistant.answer.models.text_reply import StubChatModel
from assistant.answer.prompts import load_prompt
from assistant.answer.refusal import Evidence
from assistant.knowledge.stated_values import stated_kinds
from assistant.question.reading import Reading
from assistant.tuning import OfflineAnswerSettings
from assistant.types import Entry
from tests.conftest import documents_assistant_of
from tests.context_blocks import blocks_of

QUOTA = """# GPU quota

## Owner

The quota owner this quarter is Marcus Lindqvist. Requests for more GPUs go to him by Thursday.

## Limits

Each team may hold at most 64 GPUs at once; the platform team reviews the limits every month.
"""

QUEUES = """# Submitting jobs

## Submit a Job to a LocalQueue

To run a Job in a specific LocalQueue, set the `kueue.x-k8s.io/queue-name` label on the Job:

```yaml
metadata:
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
```

Then create it with `kubectl create -f sample-job.yaml`.

## Queue field

For a JobSet, set the `.spec.queueName` field instead of the label.

## Preemption and borrowing

A ClusterQueue may borrow unused quota from its cohort. Borrowed quota is reclaimed by preemption when
the lending queue needs it back.
"""

PLAN = [["Hardware plan", "The new H100s arrive in two batches: the first in July and the second in September."]]


@pytest.fixture(scope="module")
def wiki_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    folder = tmp_path_factory.mktemp("team-wiki")
    (folder / "quota.md").write_text(QUOTA, encoding="utf-8")
    (folder / "queues.md").write_text(QUEUES, encoding="utf-8")
    write_pdf(folder / "hardware-plan.pdf", PLAN, title="Hardware plan")
    home = tmp_path_factory.mktemp("home")
    bot = Assistant(Settings(home=home, knowledge=(folder,), model="extractive"), auto_index=False)
    bot.index(progress=False)
    return bot


@pytest.mark.parametrize(
    ("question", "cited", "fact"),
    [
        ("Who owns the GPU quota this quarter?", "doc:quota.md#owner", "Marcus Lindqvist"),
        ("When do the new H100s arrive?", "doc:hardware-plan.pdf#page-1", "July"),
        ("How do I submit a Job to a specific LocalQueue?", "doc:queues.md#submit-a-job-to-a-localqueue", "label"),
        ("Which label selects the LocalQueue for a Job?", "doc:queues.md#submit-a-job-to-a-localqueue", "queue-name"),
        ("Which field sets the queue of a JobSet?", "doc:queues.md#queue-field", "set the .spec.queueName field"),
    ],
)
def test_values_stated_in_a_section_are_answered(wiki_bot: Assistant, question: str, cited: str, fact: str) -> None:
    answer = wiki_bot.ask(question)
    assert not answer.refused, answer.text
    assert cited in {c.entry_id for c in answer.citations if c.supported}, answer.text
    assert fact in answer.text


@pytest.mark.parametrize(
    "question",
    ["Who is the CEO of Acme Robotics?", "When was Volcano first released?", "How much does an H200 cost per hour?"],
)
def test_values_about_what_no_document_names_are_refused(wiki_bot: Assistant, question: str) -> None:
    assert wiki_bot.ask(question).refused


def test_answers_on_documents_never_speak_of_concept_pages_or_papers(wiki_bot: Assistant) -> None:
    for question in ("What is the difference between borrowing and preemption?", "borrowing vs preemption"):
        answer = wiki_bot.ask(question)
        assert "concept page" not in answer.text and "papers" not in answer.text, answer.text


def test_stated_kinds_read_people_dates_and_instructions_in_prose() -> None:
    assert {"person", "date"} <= stated_kinds("The quota owner this quarter is Marcus Lindqvist.")
    assert "date" in stated_kinds("The first batch arrives in July.")
    assert "howto" in stated_kinds("Then create it with kubectl create -f job.yaml.")
    assert "howto" in stated_kinds("Set the .spec.queueName field.")
    assert "date" not in stated_kinds("The controller listens on port 6817.")  # a number is not a date
    assert stated_kinds("Checkpoints are kept on scratch storage.") == frozenset()


def test_a_question_in_two_parts_cites_the_document_that_answers_each(wiki_bot: Assistant) -> None:
    answer = wiki_bot.ask("Who owns the GPU quota this quarter, and which label selects the LocalQueue for a Job?")
    files = {c.entry_id.partition("#")[0] for c in answer.citations if c.supported}
    assert {"doc:quota.md", "doc:queues.md"} <= files, answer.text
    assert "Marcus Lindqvist" in answer.text and "queue-name" in answer.text


@pytest.mark.parametrize(
    ("asking", "parts"),
    [
        (
            "Which preemption plugin, and what do jobs need so they are requeued?",
            ("Which preemption plugin", "what do jobs need so they are requeued?"),
        ),
        (
            "What pip extras do I need and what does the yaml look like",
            ("What pip extras do I need", "what does the yaml look like"),
        ),
        (
            "What does that state mean? How long until slurm gives up?",
            ("What does that state mean", "How long until slurm gives up?"),
        ),
        (
            "Which role needs extra verbs for that, and separately, what is the bare minimum for the executor?",
            ("Which role needs extra verbs for that", "what is the bare minimum for the executor?"),
        ),
        ("How do I set it up, and why?", ("How do I set it up, and why?",)),  # "why" asks nothing alone
        ("Which offline stores and online stores support it?", ("Which offline stores and online stores support it?",)),
    ],
)
def test_the_parts_a_question_asks(asking: str, parts: tuple[str, ...]) -> None:
    from assistant.question.intents import asked_parts

    assert asked_parts(asking) == parts


FAQ = """# Scheduler FAQ

## For users

What does "Orca" stand for?

Nothing today. Originally it was an acronym for "Open Resource Cluster Allocator", a name dropped in 2021.

Why does my job stay pending?

Most often its partition is full; the reason column of the queue listing names the limit that holds it.
"""

OPTIONS = """# Backfill options

- bf_interval=# - How often the backfill scheduler runs. The default value is 30 seconds.
- bf_window=# - How far into the future to look when planning job starts. Higher values cost more time.
  The default value is 1440 minutes (one day).
- bf_resolution=# - Time resolution of backfill scheduling. The default value is 60 seconds.
"""

# a how-to answered in prose and a list of links, as Argo Workflows' webhooks page (Apache-2.0) writes it
WEBHOOKS = """# Webhooks

Many clients can send events via the events API endpoint using a standard authorization header. However,
for clients that are unable to do so (e.g. because they use signature verification as proof of origin),
additional configuration is required.

In the namespace that will receive the event, create access token resources for your client:

* A role with permissions to get workflow templates and to create a workflow: [example](https://example.com/role.yaml)
* A service account for the client: [example](https://example.com/sa.yaml).
* A binding of the account to the role: [example](https://example.com/rolebinding.yaml)

The secret `argo-workflows-webhook-clients` tells Argo what type of webhook the account can be used for,
e.g. `github`.
"""


SECURITY = """# Workflow Pod Security Context

Running workflow pods as non-root is best practice for security. Clusters that enforce the restricted Pod
Security Standard reject pods that may run as root.

## Basic Configuration

Set the security context in the workflow's spec:

```yaml
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 8737
```
"""


ARCHITECTURES = """# Advanced install

## Building for the correct architectures

Kernels are compiled for the GPUs visible when the package is built.

A build made on a login node without GPUs targets the wrong cards; set the list of architectures to build
for explicitly:

```bash
TORCH_CUDA_ARCH_LIST="8.0;8.6" pip install trainer-ops
```

It also makes the build faster.
"""


EDITORS = """# Editing queue files

Queue files are plain YAML and any editor works. Code reviews of queue changes go through the platform team,
who compare the request with the VS (virtual slice) quota of the team.
"""


COSTS = """# GPU cost review

## Rates

The internal chargeback rate is $2.45 per GPU-hour for an H100 and $1.10 for an A100.
"""


@pytest.fixture(scope="module")
def handbook_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    folder = tmp_path_factory.mktemp("handbook")
    files = {"faq.md": FAQ, "backfill.md": OPTIONS, "webhooks.md": WEBHOOKS, "queues.md": QUEUES, "pods.md": SECURITY}
    files["install.md"] = ARCHITECTURES
    files["editors.md"] = EDITORS
    files["costs.md"] = COSTS
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    bot = Assistant(Settings(home=tmp_path_factory.mktemp("home"), knowledge=(folder,), model="extractive"))
    bot.index(progress=False)
    return bot


def test_an_faq_answer_is_quoted_not_its_question(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask("what does orca even stand for?")
    assert not answer.refused, answer.text
    assert "Open Resource Cluster Allocator" in answer.text
    assert "stand for" not in answer.text  # the FAQ's own question heads its answer; it answers nothing


def test_a_list_items_later_sentence_is_read_with_its_term(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask("default bf_window?")
    first, second = answer.text.splitlines()[:2]
    assert first.startswith("bf_window=# - "), answer.text  # the item it goes on from, before it
    assert "1440 minutes" in second, answer.text  # not bf_interval's 30 seconds


def test_a_how_to_on_documents_is_answered_when_its_steps_are_prose(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask("GitHub signs its payloads. How do I let it send events that start a workflow?")
    assert not answer.refused, answer.text
    assert "doc:webhooks.md#top" in {c.entry_id for c in answer.citations if c.supported}, answer.text
    # a how-to about a thing no document mentions is still refused
    assert handbook_bot.ask("How do I install Orca on a Raspberry Pi with Homebrew?").refused


def test_a_how_to_quotes_the_block_of_the_section_that_shows_it(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask(
        "Our cluster enforces the restricted Pod Security Standard. How do I make the pods non-root?"
    )
    assert not answer.refused, answer.text
    assert "runAsNonRoot: true" in answer.text, answer.text  # the explaining section has no block; its sibling has


def test_a_troubleshooting_answer_shows_the_block_its_lead_introduces_after_it(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask("no kernel image for my GPUs after building on the login node - what is going on?")
    assert not answer.refused, answer.text
    lead, fence, command, *_ = answer.text.splitlines()
    assert "login node" in lead and fence == "```bash", answer.text
    assert command == 'TORCH_CUDA_ARCH_LIST="8.0;8.6" pip install trainer-ops'


def test_each_part_of_a_two_part_question_brings_its_best_section_from_another_file_too() -> None:
    from assistant.answer.chain import best_and_other_file
    from assistant.types import Source

    def found(*ids: str) -> list[Source]:
        return [Source(i, f"{i}::0", i, "document", "", 1.0, n) for n, i in enumerate(ids, start=1)]

    # the part's search finds two sections of the file the whole question found; the other file is third
    part = found("doc:gres.html#sharding", "doc:gres.html#mps", "doc:cgroups.html#devices")
    assert [s.entry_id for s in best_and_other_file(part)] == ["doc:gres.html#sharding", "doc:cgroups.html#devices"]
    assert [s.entry_id for s in best_and_other_file(found("doc:a.md#x", "doc:a.md#y"))] == ["doc:a.md#x"]
    assert best_and_other_file([]) == []


def test_a_name_written_as_one_that_no_document_has_as_one_is_refused(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask("Is there an official VS Code extension for editing queue files?")
    assert answer.refused, answer.text  # "VS" and "Code" are each in editors.md; the editor is not
    assert "The nearest sections are" in answer.text and "paper" not in answer.text  # documents have no papers
    assert not handbook_bot.ask("Which label selects the LocalQueue for a Job?").refused


def test_a_value_is_answered_whatever_scene_the_question_sets(handbook_bot: Assistant) -> None:
    answer = handbook_bot.ask(
        "What's the internal chargeback rate for an H100, per GPU-hour? Need it for our Q3 budget."
    )
    assert not answer.refused, answer.text  # no section names "Q3": it is the asker's, not the rate's
    assert "$2.45" in answer.text, answer.text


# a tool's pages that name people, companies, dates and numbers, none of them about what some questions ask
ORCA = """# About Orca

Orca schedules training jobs for the ML platform team. It is written in Go and runs on Kubernetes 1.29.
The team moved it to its own cluster in March 2024.

## Retention

Completed jobs are kept in the history table.
The cleaner that removes the rest runs on 3 nodes.

## Workers

The --sync-workers flag sets how many reconcile loops run at once.
The default is 8.

## Contacts

Priya Raman answers questions about quotas on the #orca channel.
"""

SIZES = """# Node sizes

## GPU nodes

A GPU node has 8 H100 cards and 2 TB of memory.
"""


USAGE = """# Usage

## Platform usage

Most training runs of the platform go through Orca, about 3,000 a day.

## Utilisation

GPU nodes run at 72% utilisation on average.

## Backends

We recommend the TE backend for FP8 training.

## Accelerators

Some nodes carry Habana Processing Units (HPUs) instead of GPUs.

## Gateway

The gateway drops requests above 500 per second.
"""


SCHEDULER = """# Orca Scheduler

## Overview

Orca Scheduler places training jobs on GPU nodes. Our Placement abstraction is built to be extensible.
"""


@pytest.fixture(scope="module")
def orca_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    files = {"orca.md": ORCA, "sizes.md": SIZES, "scheduler.md": SCHEDULER, "usage.md": USAGE}
    return documents_assistant_of(tmp_path_factory.mktemp("orca"), files)


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("What's the default of --sync-workers?", "8"),
        ("How many H100 cards does a GPU node have?", "8 H100"),
        ("Who answers questions about quotas?", "Priya Raman"),
        ("What percentage utilisation do the GPU nodes run at?", "72%"),
        ("For FP8 training, which backend should I pick?", "TE backend"),  # the pages recommend; abstracts do not
    ],
)
def test_a_value_on_a_line_about_what_is_asked_is_answered(orca_bot: Assistant, question: str, fact: str) -> None:
    answer = orca_bot.ask(question)
    assert not answer.refused, answer.text
    assert fact in answer.text


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many completed jobs does the history table keep?", "count"),
        ("What's the maximum number of completed jobs the history table keeps?", "count"),
        ("Which company originally built Orca?", "company"),
        ("When was Orca first released?", "date"),
        ("What's the default number of retries for a failed job in Orca?", "default value"),
        ("Which company originally built Orca Scheduler before it was open-sourced?", "company"),
        ("Which company built Orca Scheduler, and who were the founders?", "person"),
        ("What percentage of training runs go through Orca?", "count"),  # a number of runs, not a share
        ("What percentage of requests does the gateway drop?", "count"),  # a rate "per second", not per cent
    ],
)
def test_a_value_the_pages_state_only_about_something_else_is_refused(
    orca_bot: Assistant, question: str, kind: str
) -> None:
    """The sections found name numbers, companies and dates, but on no line about what is asked."""
    answer = orca_bot.ask(question)
    assert answer.refused, answer.text
    assert f"no entry states the {kind} asked for" in answer.text


@pytest.mark.parametrize(
    "question",
    ["How many watts does a GPU node draw?", "How much money did the move to its own cluster cost?"],
)
def test_a_quantity_of_something_no_page_mentions_is_refused(orca_bot: Assistant, question: str) -> None:
    """The GPU node's section states figures (8 cards, 2 TB), none of them watts: the pages never say it."""
    answer = orca_bot.ask(question)
    assert answer.refused, answer.text
    assert "asked for about watts" in answer.text or "asked for about money" in answer.text


@pytest.mark.parametrize(
    ("asking", "things"),
    [
        ("when is h100 batch 3 arriving", [("batch", "3")]),
        ("What uptime do we promise for tier-1 model endpoints?", [("tier", "1")]),
        ("who owns step 4 of the escalation?", [("step", "4")]),
        ("Who owns the GPU quota this quarter?", []),
        ("who is on call in the week of 2025-07-21?", []),
    ],
)
def test_the_things_a_question_names_by_a_number(asking: str, things: list[tuple[str, str]]) -> None:
    from assistant.answer.section_values import numbered_things

    assert list(numbered_things(asking)) == things


@pytest.mark.parametrize(
    ("asking", "found"),
    [
        ("How much memory should I give the controller to handle about 50k pending workloads?", ["50k"]),
        ("How many workloads per second can it admit on a 5,000-node cluster?", ["5,000"]),
        ("How much CPU should the controller get for about 2,000 InferenceServices?", ["2,000"]),
        ("In the benchmark on a 2000-node simulated cluster, how many pods per second did it place?", ["2000"]),
        ("Loading a 6 billion parameter model, how much RAM do I end up needing?", ["6 billion"]),
        ("How many releases came out in 2024 alone?", []),  # a year, not a size
        ("If a node has Gres=gpu:2,shard:64, how many shards end up on each GPU?", []),  # under a hundred
        ("We run 5,000 nodes: how do I tune the controller?", []),  # no figure asked
        ("Which release supports Kubernetes 1.33?", []),
    ],
)
def test_the_sizes_a_figure_is_asked_for(asking: str, found: list[str]) -> None:
    from assistant.answer.section_values import sizes

    assert sizes(asking) == found


@pytest.mark.parametrize(
    ("size", "written"),
    [
        ("2,000", {"2000", "2,000", "2k"}),
        ("50k", {"50000", "50,000", "50k", "50 thousand"}),
        ("6 billion", {"6b", "6 billion", "6-billion"}),
        ("1.5B", {"1.5b", "1.5 billion"}),
        ("64", set()),  # no size: under a hundred
    ],
)
def test_the_ways_pages_write_a_size(size: str, written: set[str]) -> None:
    from assistant.question.names import number_forms

    assert written <= set(number_forms(size)) and bool(written) == bool(number_forms(size))


def test_a_figure_for_a_size_no_page_writes_is_refused(tmp_path: Path) -> None:
    """The sizing page states the controller's needs for 2,000 InferenceServices, not 50k, and writes 15,000
    (not 5,000) of nodes: a figure asked for 50k or 5,000 is stated by no page; one for 2,000 is answered."""
    sizing = (
        "# Controller sizing\n\n## Requests\n\n"
        "For 2,000 InferenceServices the controller needs 4 GB of memory.\n"
        "It has run on clusters of 15,000 nodes.\n"
    )
    bot = documents_assistant_of(tmp_path, {"sizing.md": sizing})
    answer = bot.ask("How much memory does the controller need for 2,000 InferenceServices?")
    assert not answer.refused and "4 GB" in answer.text, answer.text
    for question, size in [
        ("How much memory does the controller need for 50k InferenceServices?", "50k"),
        ("How much memory does the controller need on a 5,000-node cluster?", "5,000"),
    ]:
        answer = bot.ask(question)
        assert answer.refused and f"about {size}" in answer.text, answer.text


def test_a_name_that_opens_with_the_questions_own_is_no_person_or_company_it_asks_for(tmp_path: Path) -> None:
    """spaCy's small model calls "Kueue Quickstart" a person and a company; the question names Kueue, so that
    name states no founder. A section naming its founder answers."""
    quickstart = (
        "# Quickstart\n\n## Prerequisites\n\n"
        "Before you can get started with a Kueue Quickstart deployment, install kubectl and helm.\n"
    )
    bot = documents_assistant_of(tmp_path / "without", {"quickstart.md": quickstart})
    answer = bot.ask("Who founded Kueue and which company started it?")
    assert answer.refused and "no entry states the person asked for" in answer.text, answer.text
    history = "# History\n\n## Founders\n\nKueue was founded by Priya Raman in 2021.\n"
    bot = documents_assistant_of(tmp_path / "with", {"quickstart.md": quickstart, "history.md": history})
    answer = bot.ask("Who founded Kueue?")
    assert not answer.refused and "Priya Raman" in answer.text, answer.text


def test_a_date_of_another_numbered_thing_does_not_answer(tmp_path: Path) -> None:
    """ "When is batch 3 arriving?" of notes that date batches 1 and 2 is refused; batch 2's date is answered."""
    plan = (
        "# H100 plan\n\n## Deliveries\n\nBatch 1 of the H100 nodes arrives on 2025-07-21.\n"
        "Batch 2 of the H100 nodes arrives on 2025-09-22.\n"
    )
    bot = documents_assistant_of(tmp_path, {"plan.md": plan})
    assert bot.ask("when is h100 batch 3 arriving?").refused
    answer = bot.ask("when is h100 batch 2 arriving?")
    assert not answer.refused and "2025-09-22" in answer.text, answer.text


@pytest.mark.parametrize(
    ("asking", "nouns"),
    [
        ("How many GitHub stars and active contributors does the project have right now?", ["stars"]),
        ("How much money did it cost to train the model?", ["money"]),
        ("Roughly how many watts per node does power saving save?", ["watts"]),
        ("How much does a support contract cost per year?", []),  # no noun: the kind reader's price
        ("How many are there?", []),
        ("Which flag sets the queue of a job?", []),  # pages show a flag without calling it one
    ],
)
def test_the_things_a_question_asks_a_quantity_of(asking: str, nouns: list[str]) -> None:
    from assistant.answer.section_values import measured

    assert measured(asking) == nouns


@pytest.mark.parametrize(
    ("asking", "kind"),
    [
        ("How much RAM does the controller need for 5,000 nodes?", "count"),
        ("What percentage of jobs are preempted?", "count"),
        ("At most how many experiments will the autotuner try?", "count"),
        ("Into how many slices can one card be split?", "count"),
        ("What's the default cap on how many jobs the controller keeps?", "count"),
        # "how much" in a clause a verb or its object takes asks for no figure
        ("Which field caps how much they hand out?", None),
        ("Can the tool tell us roughly how much memory a model needs?", None),
        ("When the scheduler works out how much room is left in a rack, which nodes does it count?", None),
        ("What's the default value of the --workflow-workers flag?", "default"),
        ("Which default timeout does the launcher use?", "default"),
        ("Which offline stores can do that, and is the default local Dask one ok for big data?", None),
        ("What clip value does the config use by default?", None),
        ("How do I set the queue of a Job?", None),
        ("What's the maximum number of steps a single graph node can have?", "count"),
        ("What is the largest number of queues it has been tested with?", "count"),
        ("What's the default number of retries?", "default"),
        ("Does the number of workers matter?", None),
    ],
)
def test_the_value_a_question_on_documents_asks_for_by_its_question_words(asking: str, kind: str | None) -> None:
    from assistant.question.value_kinds import documents_kind

    assert documents_kind(asking) == kind


def test_documents_alone_fuse_with_their_own_k(orca_bot: Assistant, seed_assistant: Assistant) -> None:
    """A knowledge of documents alone fuses its legs with `documents_rrf_k`; the pack keeps `rrf_k`."""
    tuning = Settings().retrieval
    assert tuning.documents_rrf_k != tuning.rrf_k
    assert orca_bot.retriever.fusion.rrf_k == tuning.documents_rrf_k
    assert seed_assistant.retriever.fusion.rrf_k == tuning.rrf_k


def test_a_name_asked_in_the_singular_is_known_from_the_pages_plural(orca_bot: Assistant) -> None:
    """The pages say "HPUs"; "how much memory does an HPU have?" names nothing unknown (the plural forgiven
    either way, as "H100s" asked of pages saying "H100")."""
    retriever = orca_bot.retriever
    assert retriever.knows("HPU") and retriever.knows("HPUs") and not retriever.knows("TPU")


POSTMORTEM = """Postmortem INC-2291: Kueue webhook certificate expired

ACTION ITEMS
AI-1  Move the webhook certificate to cert-manager (90-day certificates renewed 30 days before expiry).
      Owner: Tomasz Wojcik. Due 2025-06-13. DONE 2025-06-12.
AI-2  Alert on every TLS secret in the cluster that expires in less than 21 days (alert CertificateExpiringSoon).
      Owner: Aisha Bello. Due 2025-06-27.
AI-3  Add "webhook / certificate errors" to the training job runbook.
      Owner: Jonas Eriksen. Due 2025-06-20. DONE.
"""


def test_a_list_items_owner_on_the_line_after_it_answers_who(tmp_path: Path) -> None:
    """Notes give an item's owner and date on the lines after it, sharing no word with the question: the one
    after the answering item is quoted with it, not another item's."""
    bot = documents_assistant_of(tmp_path, {"postmortem.txt": POSTMORTEM})
    answer = bot.ask("Who took the action item to add alerting for certificates that are about to expire?")
    assert not answer.refused, answer.text
    first, second = answer.text.splitlines()[:2]
    assert "Alert on every TLS secret" in first and "Aisha Bello" in second, answer.text


HOLDS = """# Managing jobs

## Holding a job

The example below places a job into hold state for 30 days and later permits it to start now.

```
$ scontrol update JobId=1234 StartTime=now+30days
$ scontrol update JobId=1234 StartTime=now
```

A submitted job script is given an id:

```
$ sbatch ./job.sh
Submitted batch job 10
```
"""


def test_the_block_a_lead_ending_in_a_full_stop_introduces_is_quoted(tmp_path: Path) -> None:
    """ "The example below places a job into hold state ... ." introduces the block after it, whichever block of
    the section shares more words with the question (the lead was matched to its line with its full stop, which
    the citation moves behind the marker, so only a lead ending in a colon found its block)."""
    bot = documents_assistant_of(tmp_path, {"jobs.md": HOLDS})
    answer = bot.ask("How do I place a job into hold state and later let it start?")
    assert not answer.refused, answer.text
    lead, fence, command, *_ = answer.text.splitlines()
    assert "example below places a job into hold state" in lead and fence == "```", answer.text
    assert command == "$ scontrol update JobId=1234 StartTime=now+30days", answer.text


def test_a_two_part_question_packs_each_parts_section_before_a_long_sections_rest(tmp_path: Path) -> None:
    """The first section's further chunks filled the context before the section the second part needs."""
    filler = "\n\n".join(
        f"Cloud node {n} resume settings: the scheduler boots cloud nodes with the resume program, and each node "
        f"in group {n} waits for the resume program and its boot script before jobs start on it."
        for n in range(60)
    )
    power = f"# Power saving\n\n## Cloud nodes\n\nResumeTimeout is how long the scheduler waits to boot.\n\n{filler}\n"
    states = (
        "# Job states\n\n## Configuring\n\nCONFIGURING means the job was allocated nodes that are still booting.\n"
        + "".join(
            f"\nState note {n}: a job in this state holds its allocation, counts against its limits and shows "
            f"the reason column of the queue listing, entry {n}, until every allocated node has registered.\n"
            for n in range(12)
        )
    )
    bot = documents_assistant_of(tmp_path, {"power.md": power, "states.md": states})
    answer = bot.ask(
        "How long does the scheduler wait for cloud nodes to boot with the resume program, and what does the job "
        "state CONFIGURING mean?"
    )
    assert not answer.refused, answer.text
    cited = {c.entry_id.split("#")[0] for c in answer.citations}
    assert {"doc:power.md", "doc:states.md"} <= cited, answer.text


CRON_BACKUP = """# Cron workflows

## Backing up with GitOps

You can back up cron workflow resources and workflow templates with GitOps by keeping their manifests in Git and \
letting Argo CD apply them.
"""
DISASTER_RECOVERY = """# Disaster recovery

We only store data in your Kubernetes cluster. You should consider backing up workflows and templates regularly.

Exporting example:

```bash
kubectl get wf,cwf,cwft,wftmpl -A -o yaml > backup.yaml
```

Importing example:

```bash
kubectl apply -f backup.yaml
```
"""


def test_a_close_alternatives_sentence_shows_the_block_it_introduces(tmp_path: Path) -> None:
    """The second section's sentence ("You should consider backing up ... regularly.") is quoted as a close
    alternative, and the command it introduces two lines on is what the asker needed: only the lead's own
    block was ever quoted."""
    bot = documents_assistant_of(tmp_path, {"cron.md": CRON_BACKUP, "disaster-recovery.md": DISASTER_RECOVERY})
    answer = bot.ask("quick way to back up all workflows and templates?")
    lines = answer.text.splitlines()
    assert "[doc:cron.md#" in lines[0], answer.text  # the other section is the alternative, not the lead
    quoted = next(n for n, line in enumerate(lines) if "consider backing up workflows" in line)
    assert lines[quoted + 1 : quoted + 3] == ["```bash", "kubectl get wf,cwf,cwft,wftmpl -A -o yaml > backup.yaml"]
    assert "kubectl apply" not in answer.text  # the import block follows no quoted sentence


SOURCE_BUILD = """# Installation details

## Building for the correct architectures

If you're getting the following error:

```
RuntimeError: CUDA error: no kernel image is available for execution on the device
```

when running the trainer, the CUDA extensions were not built for the card you are using.

When building from source the trainer supports only the architectures visible at the time of building.

```bash
TORCH_CUDA_ARCH_LIST="6.1;7.5;8.6" pip install .
```

To see which architectures get included, save the build log and grep for gencode arguments.
"""


def test_a_supporting_sentence_shows_the_block_it_introduces_too(tmp_path: Path) -> None:
    """The lead shows the error block it introduces; the sentence about building from source is followed by the
    build line with the fix, which no answer showed (one block a section, the lead's)."""
    bot = documents_assistant_of(tmp_path, {"install.md": SOURCE_BUILD})
    answer = bot.ask(
        "If I'm getting RuntimeError: CUDA error: no kernel image is available for execution on the device after "
        "building from source, what's wrong?"
    )
    lines = answer.text.splitlines()
    assert any("no kernel image is available" in line for line in lines[:3]), answer.text
    building = next(n for n, line in enumerate(lines) if "visible at the time of building" in line)
    assert lines[building + 1 : building + 3] == ["```bash", 'TORCH_CUDA_ARCH_LIST="6.1;7.5;8.6" pip install .']


LORA_FIELDS = """# LoRA adapters

## Configuration fields

| Field | Default | Description |
|---|---|---|
| maxCpuAdapters | same as maxAdapters | Adapters cached in CPU memory; if not set, vLLM uses maxAdapters. |
| maxRank | 16 | The largest LoRA rank served; if not set, the vLLM default applies. |
| maxAdapters | 1 | Adapters held in GPU memory; if not set, the vLLM default applies. |
"""


def test_a_lead_table_row_counts_once_towards_the_rows_an_answer_quotes(tmp_path: Path) -> None:
    """The lead row is also the best support: counted twice, it used up both rows a table may give (TABLE_ROWS),
    and the answer quoted one."""
    bot = documents_assistant_of(tmp_path, {"lora.md": LORA_FIELDS})
    answer = bot.ask("If I don't set maxRank or maxAdapters, what limits does vLLM fall back to?")
    assert "| maxRank | 16 |" in answer.text, answer.text
    assert answer.text.count("\n| max") == 2, answer.text  # two of the table's rows, each once


ESCALATION = """# On-call rotation

## Severities

A SEV1 is an outage of training or serving for a whole team. A SEV2 slows a team down.

## Escalation contacts

Phone numbers for when PagerDuty or Slack is down. Do not share outside the team.

| Name | Mobile |
| --- | --- |
| Priya Raman | +47 913 20 448 |
| Tomasz Wojcik | +47 412 55 903 |
| Aisha Bello | +47 986 71 320 |
"""


def test_a_small_table_a_quoted_sentence_introduces_is_shown_whole(tmp_path: Path) -> None:
    """The rows share no word with "mobile number" but their header's: the sentences that introduce them are
    quoted, and the table follows the first of them whole, each row once, where at most two rows were quoted
    apart."""
    bot = documents_assistant_of(tmp_path, {"oncall.md": ESCALATION})
    answer = bot.ask("Slack is down and I need to phone someone on the platform team. What's their mobile number?")
    assert "Phone numbers for when PagerDuty or Slack is down" in answer.text, answer.text
    lines = answer.text.splitlines()
    table = lines.index("```table")
    assert lines[table - 1].endswith("[doc:oncall.md#escalation-contacts]."), answer.text  # a sentence before it
    assert lines[table : table + 5] == [
        "```table",
        "| Name | Mobile |",
        "| Priya Raman | +47 913 20 448 |",
        "| Tomasz Wojcik | +47 412 55 903 |",
        "| Aisha Bello | +47 986 71 320 |",
    ], answer.text
    assert answer.text.count("Tomasz Wojcik") == 1, answer.text


def test_a_long_table_a_sentence_introduces_is_still_quoted_row_by_row(tmp_path: Path) -> None:
    """A reference table of more than INTRODUCED_TABLE_ROWS rows is no answer whole: at most two of its rows."""
    from assistant.answer.models.extractive import INTRODUCED_TABLE_ROWS

    rows = "\n".join(f"| Person {n} | +47 900 00 {n:03d} |" for n in range(INTRODUCED_TABLE_ROWS + 1))
    long_table = ESCALATION.split("| Priya")[0] + rows + "\n"
    bot = documents_assistant_of(tmp_path, {"oncall.md": long_table})
    answer = bot.ask("Slack is down and I need to phone someone on the platform team. What's their mobile number?")
    assert "Phone numbers for when PagerDuty or Slack is down" in answer.text, answer.text
    assert answer.text.count("| Person ") <= 2, answer.text


GPU_SHARING = """# GPU sharing

## Sharding

Sharding lets several jobs share one GPU. Configure shards with GresTypes=gpu,shard in slurm.conf. Sharding does not
fence the jobs' devices.

## MPS

MPS lets several jobs share one GPU through the multi-process service. MPS does not fence devices either.

## MIG

MIG splits a GPU into isolated instances; each job sees only its instance's devices.

## Shared usage

Shared GRES usage shows how many shards of each device are allocated. Usage does not fence anything.
"""
DEVICE_CGROUPS = """# Control groups

## Device constraint

The task/cgroup plugin confines each job to the devices it was allocated. Set TaskPlugin=task/cgroup and
ConstrainDevices=yes.
"""


def test_a_parts_best_from_another_file_is_brought_forward_from_below_a_pages_sections(tmp_path: Path) -> None:
    """Each part's search ranks the one page's four sections first and the cgroup plugin's file fifth: searched
    three deep (PART_DEPTH was 3), the part found no other file, and the section stayed behind the page's."""
    from assistant.question.reading import Reading

    bot = documents_assistant_of(tmp_path, {"gpu.md": GPU_SHARING, "cgroups.md": DEVICE_CGROUPS})
    question = (
        "I want several small jobs to share each GPU via shards. What do I configure for the sharing, and which "
        "plugin enforces the device fencing?"
    )
    chain = bot.chain
    reading = Reading(question, question, chain.encoders)
    part = chain.retriever.retrieve(reading.part_questions[1], k=5).sources
    assert [s.entry_id.partition("#")[0] for s in part] == ["doc:gpu.md"] * 4 + ["doc:cgroups.md"]
    sources = [s.entry_id for s in chain.retrieve(reading).sources]
    assert sources[:2] == ["doc:gpu.md#sharding", "doc:cgroups.md#device-constraint"], sources


PREEMPTION = """# Preemption

## Protecting pods from preemption

Preemption lets a queue take back its guaranteed resources from other queues by evicting their pods.
Interactive pods, such as notebooks, lose their state when they are evicted, so evicting them is costly.
Preemption only evicts pods of queues that use more than their guaranteed resources.
The scheduler prefers to evict the pods that started most recently.
A queue can also turn preemption off for all of its pods with a queue property.
To protect a single pod, set the annotation `scheduler.example.org/allow-preemption: "false"` on it.
The annotation is a request only: the scheduler may still evict such a pod when nothing else frees enough resources.
"""


def test_a_sections_sixth_best_sentence_is_quoted(tmp_path: Path) -> None:
    """A section's sentences all share the question's words; the one that says how ranks sixth by them and
    was left out when a section's answer quoted five (`offline_answer.section_sentences`)."""
    bot = documents_assistant_of(tmp_path, {"preemption.md": PREEMPTION})
    answer = bot.ask("Is there a way to mark a notebook pod so that preemption does not evict it?")
    assert "scheduler.example.org/allow-preemption" in answer.text, answer.text
    cited = "[doc:preemption.md#protecting-pods-from-preemption]."
    quoted = [line for line in answer.text.splitlines() if line.endswith(cited)]
    assert len(quoted) == 6, answer.text


PROTECTING = """# Preemption

## Notebook pods and preemption

Preemption may evict a notebook pod like any other pod, and an evicted notebook pod loses its kernel state.
Save notebook work often.

## Protecting a pod

There is a flag for a pod that preemption should not evict.
Set the annotation `scheduler.example.org/allow-preemption: "false"` on the pod.
"""


def test_a_close_alternatives_best_sentence_is_followed_by_the_next(tmp_path: Path) -> None:
    """The second section fits about as well as the first; its best sentence announces a flag and the one after
    it says how to set it, which no answer quoted (a close alternative was one sentence)."""
    bot = documents_assistant_of(tmp_path, {"preemption.md": PROTECTING})
    answer = bot.ask("Can I keep preemption from evicting my notebook pod?")
    lines = answer.text.splitlines()
    flag = next(n for n, line in enumerate(lines) if "There is a flag for a pod" in line)
    assert lines[flag].startswith("Preemption › Protecting a pod: "), answer.text
    how = 'Set the annotation scheduler.example.org/allow-preemption: "false" on the pod'
    assert lines[flag + 1] == f"{how} [doc:preemption.md#protecting-a-pod].", answer.text


TIMEOUTS = """# Gang scheduling

## Scheduling policy parameters

The following parameters are supported on a gang application:

`placeholderTimeoutInSeconds`

Default value: *15 minutes*.
This parameter defines the reservation timeout for how long the scheduler should wait until giving up allocating all
the placeholders.
The timeout timer starts to tick when the scheduler allocates the first placeholder pod.
This ensures that if the scheduler could not schedule all the placeholder pods, it will eventually give up.
If none of the placeholders can be allocated, this timeout does not kick in.

`gangSchedulingStyle`

Valid values: *Soft*, *Hard*.
Default value: *Soft*.
This parameter defines the fallback mechanism if the app encounters gang issues due to placeholder pod allocation.
"""


def test_a_quoted_sentence_comes_with_the_first_sentence_it_goes_on_from(tmp_path: Path) -> None:
    """The sentences that describe the timeout are read with their paragraph's first sentence, which states its
    default and shares no word with the question; the answer quoted them without it."""
    bot = documents_assistant_of(tmp_path, {"gang.md": TIMEOUTS})
    answer = bot.ask("How long will the scheduler wait for all placeholders before it gives up, if we set nothing?")
    lines = answer.text.splitlines()
    cited = "[doc:gang.md#scheduling-policy-parameters]"
    assert lines[0] == f"Default value: 15 minutes {cited}.", answer.text
    assert lines[1].startswith("This parameter defines the reservation timeout"), answer.text


TRACKERS = """# Experiment trackers

## Registering a custom tracker by name

Instead of passing an instance, you can register a custom tracker class so it can be selected by its name.
This is handy when the trackers to use are read from a config file:

```python
from trainer_ops.tracking import GeneralTracker, register_tracker_class


class MyCustomTracker(GeneralTracker):
    name = "my_tracker"


register_tracker_class(MyCustomTracker)
```
"""


def test_a_quoted_code_block_keeps_its_blank_lines_and_verifies(tmp_path: Path) -> None:
    """Python code keeps two blank lines between definitions; the answer's blank lines were squeezed to one,
    inside a quoted block too, so the block no longer matched its page and was removed as unverified."""
    bot = documents_assistant_of(tmp_path, {"tracking.md": TRACKERS})
    answer = bot.ask("Can I select my own tracker class by a name from a config file?")
    assert "register_tracker_class(MyCustomTracker)" in answer.text, answer.text
    assert "import GeneralTracker, register_tracker_class\n\n\nclass MyCustomTracker" in answer.text, answer.text
    assert not any("does not hold" in note for note in answer.notes), answer.notes


TOPOLOGY = """# Topology-aware scheduling

## Status

Topology-aware scheduling is tracked in [KEP-2724] and graduated to beta in release 0.9 [1].
Its design review is noted in the (INC-2291) incident as well.

## References

[1] Release notes for 0.9.
"""


def test_a_pages_own_bracketed_words_are_quoted_as_written_not_read_as_citations(tmp_path: Path) -> None:
    """A page's "[KEP-2724]" and "(INC-2291)" read as ids no entry has: they were removed as invented citations;
    its footnote "[1]" read as the label of the first entry in the model's context: it became an entry's id."""
    bot = documents_assistant_of(tmp_path, {"topology.md": TOPOLOGY})
    answer = bot.ask("Which release made topology-aware scheduling beta, and where is it tracked?")
    cited = "[doc:topology.md#status]"
    line = f"Topology-aware scheduling is tracked in [KEP-2724] and graduated to beta in release 0.9 [1] {cited}."
    assert line in answer.text.splitlines(), answer.text
    assert "noted in the (INC-2291) incident" in answer.text, answer.text
    assert not any("not in the context" in note for note in answer.notes), answer.notes
    # "[1]" named no entry: each section is cited for its own lines, the footnote's section (a close alternative)
    # only for the footnote it quotes
    assert [c.entry_id for c in answer.citations] == ["doc:topology.md#status", "doc:topology.md#references"]
    references = [line for line in answer.text.splitlines() if "[doc:topology.md#references]" in line]
    footnote = "Topology-aware scheduling › References: [1] Release notes for 0.9"
    assert references == [f"{footnote} [doc:topology.md#references]."], answer.text


def test_a_model_reads_a_pages_footnote_apart_from_the_labels_and_may_copy_it(tmp_path: Path) -> None:
    """The context a chat model reads shows the page's footnote in full-width brackets, unlike the label
    that ends the sentence; a reply copying the sentence keeps the page's "[1]" and cites by the label."""
    bot = documents_assistant_of(tmp_path, {"topology.md": TOPOLOGY})
    sentence = "Topology-aware scheduling is tracked in [KEP-2724] and graduated to beta in release 0.9"
    stub = StubChatModel(replies=[f"{sentence} \uff3b1\uff3d [1]."])
    answer = Assistant(bot.settings, model=stub).ask("Which release made topology-aware scheduling beta?")
    prompt = stub.calls[0][-1].content
    assert f"{sentence} \uff3b1\uff3d [1]." in prompt, prompt
    assert answer.text == f"{sentence} [1] [doc:topology.md#status].", answer.text
    assert [(c.entry_id, c.supported) for c in answer.citations] == [("doc:topology.md#status", True)]


ROADMAP = """# Roadmap

## Owners

The scheduler roadmap is owned by Dana Whitfield, who reviews it every quarter.
"""


def test_an_answer_quotes_each_sentence_once(tmp_path: Path) -> None:
    """The second part's sentence was quoted under its section's title as a close alternative and again on its
    own for the part it answers: the answer said the same thing twice."""
    bot = documents_assistant_of(tmp_path, {"topology.md": TOPOLOGY, "roadmap.md": ROADMAP})
    answer = bot.ask(
        "In which release did topology-aware scheduling graduate to beta, and who owns the scheduler roadmap?"
    )
    owner = "The scheduler roadmap is owned by Dana Whitfield, who reviews it every quarter [doc:roadmap.md#owners]."
    assert sum(line.endswith(owner) for line in answer.text.splitlines()) == 1, answer.text
    assert "release 0.9 [1] [doc:topology.md#status]." in answer.text, answer.text


def alternatives_of(kind: str, fits: list[float]) -> list[str]:
    """The close-alternative lines of an answer whose first entry fits the question with 1.0 and the entries after
    it with `fits`, in the search's order: each entry one sentence, titled by its place."""
    tuning = OfflineAnswerSettings()
    views, score = [], {}
    for rank, fit in enumerate([1.0, *fits]):
        sentence = Candidate(f"doc:page{rank}.md#part", rank, 0, kind, f"Sentence of entry {rank}.", f"Entry {rank}")
        views.append(EntryView(sentence.entry_id, sentence.title, kind, rank, [sentence], tuning))
        score[id(sentence)] = fit
    return close_alternative(views, score)


def test_a_section_a_third_as_close_three_deep_is_a_close_alternative() -> None:
    """Of a team's documents the section that says it, or a two-file question's second file, often shares fewer
    of the question's words than the first section and sits third or fourth: each of the next three sections
    that fits a third as well as the first is quoted (it was the next two at half as well). The pack's entries
    keep their rule: the next one, at half as well."""
    lines = alternatives_of("document", [0.2, 0.35, 0.4, 0.9])
    titled = [line.split(":")[0] for line in lines]
    assert titled == ["Entry 2", "Entry 3"], lines  # entry 1 fits too little; entry 4 is a fourth alternative
    assert alternatives_of("abstract", [0.2, 0.35, 0.4, 0.9]) == []
    assert [line.split(":")[0] for line in alternatives_of("abstract", [0.6, 0.9])] == ["Entry 1"]


PLACEMENTS = """# Running a JobSet

## Topology-aware scheduling

Kueue supports three placement scenarios for JobSets using annotations on the Pod template:

**1. Same-domain placement**
Force the entire replicated job to be scheduled in a single topology domain such as one rack.

**2. Sliced placement**
Split the replicated job into slices, where each slice must fit in a single rack.

**3. Combined placement**
Force the whole replicated job into one block, sliced across racks within that block.
"""


def test_a_numbered_paragraphs_number_is_never_quoted_alone() -> None:
    """A numbered paragraph no Markdown list holds ("**1. Same-domain placement**" and its text) was split into
    "1." and its text, and answers quoted "1 [doc:...]." as a line of its own."""
    item = "Same-domain placement Force the entire job."
    assert quotable_units(f"1. {item}") == [item]
    assert quotable_units("(2) Sliced placement. Split it.") == ["(2) Sliced placement.", "Split it."]  # not cut off


def test_answers_on_numbered_paragraphs_quote_no_bare_number(tmp_path: Path) -> None:
    """Through the assistant: the numbered paragraphs' text is quoted, their numbers never on a line alone."""
    bot = documents_assistant_of(tmp_path, {"jobsets.md": PLACEMENTS})
    answer = bot.ask("How do I force all pods of a JobSet into the same rack with topology-aware scheduling?")
    lines = answer.text.splitlines()
    assert any("Force the entire replicated job to be scheduled in a single topology domain" in line for line in lines)
    assert not [line for line in lines if line.split(" [doc:")[0].strip("().").isdigit()], answer.text


def test_a_figure_asked_and_none_quoted_is_a_refusal() -> None:
    """ "How much RAM ...?" answered with sentences about limits and no number at all answered nothing asked:
    the offline model refuses, and the refusal names the kind of value no section states. A number the
    question writes itself ("5,000") is not one the answer states."""
    asked = Reading("How much RAM does the controller need for a 5,000-node cluster?")
    limits = Entry(
        "doc:big.md#limits",
        "document",
        "Large clusters › Limits",
        "The ulimit values of the controller should be set quite high for memory size on a 5,000-node cluster.\n"
        "Raise the controller's memory limits before the cluster grows.",
    )
    sized = Entry("doc:big.md#sizing", "document", "Large clusters › Sizing", "The controller needs 16 GB of RAM.")
    layout = Layout(files={"doc:big.md#limits": "doc:big.md", "doc:big.md#sizing": "doc:big.md"})
    tuning = OfflineAnswerSettings()
    assert extract_answer(asked, blocks_of([limits]), tuning, layout) == load_prompt("refusal")
    assert "16 GB" in extract_answer(asked, blocks_of([sized]), tuning, layout)
    assert not states_a_figure(["Set the limits high for a 5,000-node cluster [3].", "```\nulimit -n\n```\n[3]"], asked)
    reason = unstated(Evidence(0.6, kind="count", documents=True))
    assert reason == "no entry states the count asked for"
    assert unstated(Evidence(0.6, kind="count", documents=False)) == ""  # the pack's refusals keep their words

"""What a question on a team's documents names and asks, read so that a section stating the answer answers it.

Each case is a question a new documentation set's first run refused or missed although its page answers
it: a measurement the asker writes, a type name the pages write as words, "how" asked around a person, a
property's labelled default, a version number that keys a table's row, "which release" asked as a version,
"how much" inside a clause, a value on the sentence after its subject, the documents' own subject unsaid, an
acronym the pages write out. A few are the other way round: a role or an email address asked of pages that
state none is refused. The pages are written here and indexed for real; the offline model answers.
"""

from __future__ import annotations

import pytest

from assistant import Assistant
from tests.conftest import documents_assistant_of

SCHEDULER = """# Scheduler guide

## Throughput

In this experiment we set up a simulated 2000/4000 nodes cluster with Kubemark.
The scheduler placed 204 pods per second, the default scheduler 49.

## Namespace quota

The resource quota of a namespace is set with the quota annotation on the namespace.

## User resolution

The admission controller adds the user.info annotation to every pod, naming the user who submitted it.

## preemption.delay

Supported values: any positive duration string.

Default value: 30s

A queue with pending requests can only trigger preemption after it has waited this long.
"""


@pytest.fixture(scope="module")
def scheduler_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return documents_assistant_of(tmp_path_factory.mktemp("scheduler"), {"guide.md": SCHEDULER})


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        # the asker's measurement need not be repeated by the line with the figure ("2000/4000 nodes")
        ("On a 2000-node simulated cluster, how many pods per second did the scheduler place?", "204"),
        # the pages write the type's name as words
        ("How do I give a namespace a quota without a ResourceQuota?", "quota annotation"),
        # "how does it know which person ..." asks how, not who
        ("Pods have no user object, so how does the scheduler know which person a pod belongs to?", "user.info"),
        # a property's own section labels its default; the line shares no word with the question
        ("What's the default wait before a queue with pending requests may preempt?", "30s"),
    ],
)
def test_a_section_that_states_the_answer_answers(scheduler_bot: Assistant, question: str, fact: str) -> None:
    answer = scheduler_bot.ask(question)
    assert not answer.refused, answer.text
    assert fact in answer.text, answer.text


def test_a_type_name_the_pages_never_write_is_still_unknown(scheduler_bot: Assistant) -> None:
    """ "TensorFlow" of pages without the words "tensor flow" together is a name no section mentions."""
    assert scheduler_bot.ask("How do I give a TensorFlow job a namespace quota?").refused


@pytest.mark.parametrize(
    ("asking", "how"),
    [
        ("Kubernetes has no user object, so how does YuniKorn know which person a pod belongs to?", True),
        ("How do I find who owns the queue?", True),
        ("How many pods per second?", False),
        ("Who owns the quota, and how do I ask for more?", False),  # the first question word asks who
        ("How long until the node is back?", False),
    ],
)
def test_a_question_that_asks_how(asking: str, how: bool) -> None:
    from assistant.question.value_kinds import asks_how

    assert asks_how(asking) is how


VERSIONS = """# Version compatibility

## Kubernetes versions

Each release of the scheduler supports the Kubernetes versions below.

| K8s Version | Supported from version | Support ended |
|---|---|---|
| 1.29.x | 1.4.0 | 1.7.0 |
| 1.30.x | 1.5.0 | - |
| 1.31.x | 1.6.0 | - |
| 1.32.x | 1.7.0 | - |
| 1.33.x | 1.8.0 | - |
"""


@pytest.fixture(scope="module")
def versions_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return documents_assistant_of(tmp_path_factory.mktemp("versions"), {"versions.md": VERSIONS})


def test_a_number_the_question_names_finds_the_row_that_writes_it(versions_bot: Assistant) -> None:
    """ "Kubernetes 1.33" is a key of the table: the row that writes "1.33.x" answers, not the first rows."""
    answer = versions_bot.ask("From which scheduler version on is Kubernetes 1.33 supported?")
    assert not answer.refused, answer.text
    assert "1.8.0" in answer.text, answer.text


def test_a_labelled_default_leads_the_answer_for_a_default(scheduler_bot: Assistant) -> None:
    answer = scheduler_bot.ask("What's the default wait before a queue with pending requests may preempt?")
    assert answer.text.splitlines()[0].startswith("Default value: 30s"), answer.text


def test_which_release_asks_a_version_not_a_date(versions_bot: Assistant) -> None:
    """Pages that list versions and no dates answer "which release first supports ...?"; it asked a date."""
    answer = versions_bot.ask("Which scheduler release is the first one that supports Kubernetes 1.33?")
    assert not answer.refused, answer.text
    assert "1.8.0" in answer.text, answer.text


@pytest.mark.parametrize(
    ("asking", "version"),
    [
        ("Which YuniKorn release is the first one that supports Kubernetes 1.33?", True),
        ("what version added gang scheduling?", True),
        ("What was the release date of YuniKorn 1.9.0?", False),  # a date, of a release
        ("When was 1.9 released?", False),
    ],
)
def test_a_question_that_asks_which_version(asking: str, version: bool) -> None:
    from assistant.question.value_kinds import asks_which_version

    assert asks_which_version(asking) is version


QUEUER = """# Queuer reference

## Settings reference

- **retry.limitCount** - indicates how many times a failed provisioning request is tried again. Defaults to 3.
- **retry.maxSeconds** - the longest wait, in seconds, before a request is tried again. Defaults to 1800.

## Lending between teams

The lendingLimit field sets the most quota that a team's queue hands to the other teams of its group.

## Free capacity on a node

Free capacity counts only nodes whose condition is Ready, and subtracts the requests of pods the
scheduler does not place itself, such as DaemonSets and static pods.

## Limitations of Ray jobs

- A Queuer managed RayJob cannot reuse an existing RayCluster.
- Because a workload holds at most 8 PodSets, the maximum number of `spec.clusterSpec.workerGroupSpecs` is 7.
"""


@pytest.fixture(scope="module")
def queuer_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return documents_assistant_of(tmp_path_factory.mktemp("queuer"), {"reference.md": QUEUER})


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        # "Defaults to 3." goes on about its list item's first sentence, which says what is asked
        ("How many times does Queuer retry a failed provisioning request by default?", "Defaults to 3"),
        # "how much" in a clause that "caps" takes asks for no figure: the field is the answer
        ("Which field caps how much one team hands out to the others?", "lendingLimit"),
        # ... nor in one that "works out" takes; and "DaemonSet" is the pages' "DaemonSets"
        ("When the scheduler works out how much room is left on a node, does it count DaemonSet pods?", "DaemonSets"),
        # "Queuer-managed" is the pages' "Queuer managed"; `workerGroupSpecs` names worker groups: the section
        # answers (which of its lines leads is the sentence choice's, not checked here)
        ("How many worker groups can a Queuer-managed RayJob have at most?", "#limitations-of-ray-jobs]"),
    ],
)
def test_a_value_said_in_the_pages_own_way_answers(queuer_bot: Assistant, question: str, fact: str) -> None:
    answer = queuer_bot.ask(question)
    assert not answer.refused, answer.text
    assert fact in answer.text, answer.text


TEAM = """# ML platform team

## Who we are

Aisha Rahman leads the ML platform team. Tomas Berg is the platform's product owner.
We run the GPU clusters and the model-serving platform.
"""


@pytest.fixture(scope="module")
def team_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return documents_assistant_of(tmp_path_factory.mktemp("team"), {"team.md": TEAM})


def test_who_holds_a_role_is_answered_by_a_line_that_says_the_role(team_bot: Assistant) -> None:
    """A person on a line about the ML platform is not its product manager: the role asked must be said."""
    owner = team_bot.ask("Who is the product owner for the ML platform?")
    assert not owner.refused, owner.text
    assert "Tomas Berg" in owner.text, owner.text
    assert team_bot.ask("Who is the product manager for the ML platform?").refused


@pytest.mark.parametrize(
    ("asking", "address"),
    [
        ("What email address should I use to privately report a security vulnerability?", True),
        ("Who do I contact, or which email, to report a vulnerability?", True),
        ("whats the e-mail for the on-call team?", True),
        ("How do I set up email alerts for failed jobs?", False),  # asks how
        ("Which alerts does the scheduler send by email?", False),
        ("Which email alerts does the scheduler send?", False),  # asks about alerts
    ],
)
def test_a_question_that_asks_an_email_address(asking: str, address: bool) -> None:
    from assistant.question.value_kinds import asks_an_address

    assert asks_an_address(asking) is address


SECURITY = """# Security

## Reporting a vulnerability

Please report security vulnerabilities privately, not in a public issue.
"""


def test_an_email_address_asked_of_pages_that_state_none_is_refused(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A section on reporting vulnerabilities that gives no address does not answer which address to use;
    one that gives it does."""
    question = "What email address should I use to privately report a security vulnerability?"
    without = documents_assistant_of(tmp_path_factory.mktemp("no-address"), {"security.md": SECURITY})
    refused = without.ask(question)
    assert refused.refused and "email address" in refused.text, refused.text
    stated = SECURITY + "Write to security@example.org with the details.\n"
    with_address = documents_assistant_of(tmp_path_factory.mktemp("address"), {"security.md": stated})
    answer = with_address.ask(question)
    assert not answer.refused and "security@example.org" in answer.text, answer.text


SERVO = {
    "overview.md": """# Servo overview

## What Servo is

Servo serves models on Kubernetes. Servo scales each model with its traffic.

## Installing Servo

Install Servo with its Helm chart (chart v4.1 or later). Servo needs cert-manager first.
""",
    "rollout.md": """# Canary rollout

## How Servo splits traffic

Servo sends part of the traffic to the new version. The canaryTrafficPercent field sets the share of traffic
that the new version gets; the rest stays on the old version.
""",
    "transformer.md": """# Custom transformers

## Transformer arguments

- `--request_timeout_seconds`: The timeout for the request sent to the predictor. The default value is 600 seconds.
- `--request_retries`: The number of retries for the request sent to the predictor. The default value is 0.

## Model server arguments

- `--max_message_length`: The largest gRPC message the Python model server takes. The default is 8388608 bytes.
""",
    "multi-node.md": """# Multi-node serving

## Hugging Face vLLM runtime restrictions

- Only four GPU types are allowed: nvidia.com/gpu, intel.com/gpu, amd.com/gpu and habana.ai/gaudi.
""",
}


@pytest.fixture(scope="module")
def servo_bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return documents_assistant_of(tmp_path_factory.mktemp("servo"), SERVO)


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        # "is it a percentage?" asks yes or no, not for a share: the field is the answer
        ("How is the traffic share for the new version expressed, is it a percentage?", "canaryTrafficPercent"),
        # "Servo" is what most sections say: the transformer's section need not repeat it
        ("What's the default timeout, and how many retries, when a Servo transformer calls its predictor?", "600"),
        # ... nor is "Servo Python" a compound the pages must write as one
        ("By default how large can a gRPC message be in the Servo Python model server?", "8388608"),
        # "HF vLLM" is the pages' "Hugging Face vLLM"
        ("How many GPU types does the HF vLLM runtime accept?", "four GPU types"),
    ],
)
def test_a_value_about_the_documents_subject_answers(servo_bot: Assistant, question: str, fact: str) -> None:
    answer = servo_bot.ask(question)
    assert not answer.refused, answer.text
    assert fact in answer.text, answer.text


@pytest.mark.parametrize(
    ("asking", "share"),
    [
        ("What percentage of jobs are preempted?", True),
        ("which percent of the traffic goes to the canary?", True),
        ("How is the share expressed, is it a percentage in both?", False),
    ],
)
def test_a_question_that_asks_for_a_percentage(asking: str, share: bool) -> None:
    from assistant.question.value_kinds import share_asked
    from assistant.text import words

    assert share_asked(words(asking.lower())) is share


def test_a_release_of_the_documents_subject_the_pages_never_name_is_unknown(servo_bot: Assistant) -> None:
    """ "Servo" is what the documents are about, so "Servo Python" needs no writing as one; "Servo v4.1" names
    a release, which the pages must name."""
    answer = servo_bot.ask("Which Kubernetes versions has Servo v4.1 been tested against?")
    assert answer.refused, answer.text

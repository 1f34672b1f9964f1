"""The knowledge readers: concept pages, related-papers pages and JSON Lines packs -> Entry.

Table-driven: the real corpora pin the counts and fields the rest of the system relies on,
and every kind of broken input is written into `tmp_path` next to good files, so each test
shows both halves of the contract: the broken file is a Problem naming file and line, and
the rest of the corpus still loads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.knowledge.concept_page import parse_concept_page
from assistant.knowledge.corpus import (
    DANGLING,
    MAX_PAGE_BYTES,
    TITLE_CHARS,
    Corpus,
    abstract_id,
    load_corpus,
    parse_related_page,
    read_jsonl,
    readable_title,
)
from assistant.text import slugify
from assistant.types import Problem
from tests.conftest import REPO, SEED

MLSYS = REPO / "knowledge" / "mlsys"
GPU_PAGE = next(SEED.glob("000_*.txt"))
SERVERLESS = (
    "This paper presents ServerlessLLM, a distributed system designed to support low-latency serverless "
    "inference for Large Language Models (LLMs). By harnessing the substantial near-GPU storage and memory "
    "capacities of inference servers,…"
)
SHARED_ABSTRACT = "abs-76fb5a33ad"  # "As emerging deep neural network (DNN) models..." on pages 003 and 004


@pytest.fixture(scope="module")
def seed() -> Corpus:
    return load_corpus([SEED])


@pytest.fixture(scope="module")
def mlsys() -> Corpus:
    return load_corpus([MLSYS])


# --- the seed corpus ---------------------------------------------------------------------


def test_seed_corpus_has_60_entries_and_no_problems(seed: Corpus) -> None:
    assert len(seed.entries) == 60
    assert seed.problems == []
    assert [Path(f).name for f in seed.files] == sorted(p.name for p in SEED.glob("*.txt"))


def test_seed_has_one_concept_and_59_abstracts(seed: Corpus) -> None:
    kinds = [entry.kind for entry in seed.entries.values()]
    assert kinds.count("concept") == 1
    assert kinds.count("abstract") == 59
    abstract_ids = [e.id for e in seed.entries.values() if e.kind == "abstract"]
    assert all(re.fullmatch(r"abs-[0-9a-f]{10}", i) for i in abstract_ids)


GPU_FIELDS = [
    ("section", "Systems and efficient execution"),
    ("definition", "A processor designed for highly parallel workloads, widely used for tensor computation."),
    ("example", "Accelerate neural-network training."),
    ("caveat", "Available memory and supported operations matter alongside compute speed."),
    ("level", "Foundational"),
    ("stages", ["Training", "Inference", "Deployment"]),
    ("tags", ["DL", "LLM", "SLM", "Systems"]),
    ("aliases", ["Graphics processing unit"]),
    ("related_concepts", []),
    ("linking_here", []),
]


@pytest.mark.parametrize(("name", "expected"), GPU_FIELDS, ids=[n for n, _ in GPU_FIELDS])
def test_gpu_page_fields(seed: Corpus, name: str, expected: object) -> None:
    assert seed.entries["MLD-0472"].fields[name] == expected


def test_gpu_page_identity_and_lists(seed: Corpus) -> None:
    gpu = seed.entries["MLD-0472"]
    assert (gpu.id, gpu.kind, gpu.title, gpu.url) == ("MLD-0472", "concept", "GPU", None)
    assert gpu.source == f"knowledge/seed/{GPU_PAGE.name}:1"
    technology = gpu.fields["technology"]
    assert len(technology) == 22
    assert technology[0] == {
        "name": "Amazon SageMaker AI",
        "description": "AWS managed ML development, training and deployment services.",
    }
    assert technology[-1]["name"] == "Triton GPU language"
    assert {t["name"] for t in technology} >= {"CUDA", "NCCL", "ROCm", "torch.compile"}
    references = gpu.fields["references"]
    assert len(references) == 4
    assert references[0] == {"title": "PyTorch Fully Sharded Data Parallel", "note": "Consulted"}
    assert references[-1] == {"title": "Original reference URL", "note": ""}


def test_gpu_text_is_readable_and_without_boilerplate(seed: Corpus) -> None:
    gpu = seed.entries["MLD-0472"]
    lines = gpu.text.splitlines()
    assert lines[:4] == [
        "GPU",
        "A processor designed for highly parallel workloads, widely used for tensor computation.",
        "Example: Accelerate neural-network training.",
        "Caveat: Available memory and supported operations matter alongside compute speed.",
    ]
    assert "Also known as: Graphics processing unit." in lines
    assert "CUDA: NVIDIA GPU programming platform and libraries." in lines
    # the status line is kept as a field, never in the text that is embedded and quoted
    assert "detailed expansion pending" in gpu.fields["status"]
    assert "pending" not in gpu.text
    assert "Original reference page" not in gpu.text
    assert "preserved below" not in gpu.text


def test_abstract_on_two_pages_is_one_entry_with_both_sources(seed: Corpus) -> None:
    shared = seed.entries[SHARED_ABSTRACT]
    assert shared.text.startswith("As emerging deep neural network (DNN) models continue to grow in size")
    sources = shared.fields["sources"]
    assert [s.split("/")[-1].split(":")[0][:3] for s in sources] == ["003", "004"]
    assert all(re.fullmatch(r"knowledge/seed/\S+\.txt:\d+", s) for s in sources)
    assert shared.source == sources[0]
    assert len(shared.fields["anchors"]) == 2
    assert sum(1 for e in seed.entries.values() if e.text == shared.text) == 1
    # only that abstract appears twice in the seed
    assert [e.id for e in seed.entries.values() if "sources" in e.fields] == [SHARED_ABSTRACT]


def test_related_abstract_fields(seed: Corpus) -> None:
    entry = seed.entries["abs-fad87d80f4"]
    assert entry.text == SERVERLESS
    assert entry.kind == "abstract"
    assert (
        entry.title
        == "This paper presents ServerlessLLM, a distributed system designed…"  # cut before "to", not mid-phrase
    )
    assert entry.fields["truncated"] is True
    assert entry.fields["anchors"] == ["Eliminating Multi-GPU Performance Taxes: A Systems…"]
    assert re.fullmatch(r"knowledge/seed/002_\w+\.txt:23", entry.source)


# --- abstract ids and slugs ------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant",
    [
        SERVERLESS,
        "  " + SERVERLESS.replace(" ", "\n", 3) + "\n",
        SERVERLESS.upper(),
        SERVERLESS.replace(", ", ",\t "),
    ],
    ids=["same", "whitespace", "case", "tabs"],
)
def test_abstract_id_is_stable_under_whitespace_and_case(variant: str) -> None:
    assert abstract_id(variant) == "abs-fad87d80f4"  # the id the seed index and questions use


def test_abstract_id_format_and_sensitivity() -> None:
    assert re.fullmatch(r"abs-[0-9a-f]{10}", abstract_id("GPUs are fast."))
    assert abstract_id("GPUs are fast.") == abstract_id("GPUs are fast.")
    assert abstract_id("ﬁne-tuning on GPUs.") == abstract_id("fine-tuning on GPUs.")  # NFKC
    assert abstract_id("GPUs are fast.") != abstract_id("GPUs are slow.")


@pytest.mark.parametrize(
    ("term", "slug"),
    [
        ("AUC (Area under the ROC Curve)", "auc-area-under-the-roc-curve"),
        ("L<sub>1</sub> loss", "l1-loss"),
        ("A/B testing", "a-b-testing"),
        ("Café au lait", "cafe-au-lait"),
        ("  Hello,  World! ", "hello-world"),
    ],
)
def test_slugify(term: str, slug: str) -> None:
    assert slugify(term) == slug


# --- the mlsys pack ---------------------------------------------------------------------


def test_mlsys_pack_counts(mlsys: Corpus) -> None:
    assert mlsys.problems == []
    assert len(mlsys.entries) == 2107
    prefixes = [entry_id.split(":")[0] for entry_id in mlsys.entries]
    assert prefixes.count("arxiv") == 1695
    assert prefixes.count("glossary") == 412
    assert {e.kind for i, e in mlsys.entries.items() if i.startswith("arxiv:")} == {"abstract"}
    assert {e.kind for i, e in mlsys.entries.items() if i.startswith("glossary:")} == {"concept"}


@pytest.mark.parametrize(
    ("entry_id", "title", "url", "text_start"),
    [
        (
            "glossary:auc-area-under-the-roc-curve",
            "AUC (Area under the ROC Curve)",
            "https://developers.google.com/machine-learning/glossary#auc",
            "An evaluation metric that considers all possible classification thresholds.",
        ),
        (
            "glossary:l1-loss",
            "L1 loss",
            "https://developers.google.com/machine-learning/glossary#l1_loss",
            "Loss function based on the absolute value",
        ),
        (
            "arxiv:2512.19606",
            "RAPID-LLM: Resilience-Aware Performance analysis of Infrastructure for Distributed LLM "
            "Training and Inference",
            "https://arxiv.org/abs/2512.19606",
            "RAPID-LLM is a unified performance modeling framework",
        ),
    ],
)
def test_mlsys_examples(mlsys: Corpus, entry_id: str, title: str, url: str, text_start: str) -> None:
    entry = mlsys.entries[entry_id]
    assert entry.title == title
    assert entry.url == url
    assert entry.text.startswith(text_start)
    assert re.fullmatch(r"knowledge/mlsys/.+\.jsonl:\d+", entry.source)


def test_glossary_aliases_and_related_are_resolved(mlsys: Corpus) -> None:
    auc = mlsys.entries["glossary:auc-area-under-the-roc-curve"]
    assert auc.fields["aliases"] == ["Area under the ROC Curve"]
    assert auc.fields["related"] == ["glossary:classification-threshold"]
    assert "glossary:squared-loss" in mlsys.entries["glossary:l1-loss"].fields["related"]
    assert all(r in mlsys.entries for e in mlsys.entries.values() for r in e.fields.get("related", []))
    # formula markers become $...$; no text keeps a space before a full stop
    assert not any("[$$]" in e.text for e in mlsys.entries.values())


def test_arxiv_fields_are_kept(mlsys: Corpus) -> None:
    entry = mlsys.entries["arxiv:2512.19606"]
    assert entry.fields["arxiv_id"] == "2512.19606"
    assert entry.fields["authors"] and entry.fields["categories"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry.fields["submit_date"])


# --- concept-page parser, table-driven ---------------------------------------------------

PAGE_HEAD = "Systems · MLD-9001\nPipeline parallelism\nSplitting a model's layers across devices.\n"

PAGE_CASES = [
    # (id, body after the three head lines, field, expected value)
    (
        "example",
        "Original example\nGPipe splits a model into stages.\n",
        "example",
        "GPipe splits a model into stages.",
    ),
    (
        "multi-line caveat",
        "Original caveat\nBubbles waste time.\nMicro-batches help.\n",
        "caveat",
        "Bubbles waste time. Micro-batches help.",
    ),
    (
        "context line",
        "Context and aliases\nLevel: Advanced. Stages: Training · Inference.\n",
        "stages",
        ["Training", "Inference"],
    ),
    ("aliases", "Context and aliases\nAliases: PP, Layer pipelining.\n", "aliases", ["PP", "Layer pipelining"]),
    (
        "technology",
        "Technology connections\n- DeepSpeed — Distributed training library.\n",
        "technology",
        [{"name": "DeepSpeed", "description": "Distributed training library."}],
    ),
    (
        "references",
        "Original references\n- GPipe paper ↗ · Consulted\n",
        "references",
        [{"title": "GPipe paper", "note": "Consulted"}],
    ),
    ("related concepts", "Related concepts\n- Tensor parallelism\n", "related_concepts", ["Tensor parallelism"]),
    ("unknown heading kept", "Practical notes\n- Balance the stages.\n", "practical_notes", ["Balance the stages."]),
    (
        "definition continues",
        "Across GPUs or nodes.\n",
        "definition",
        "Splitting a model's layers across devices. Across GPUs or nodes.",
    ),
    (
        "status line is a field",
        "Original reference page · detailed expansion pending.\n",
        "status",
        "Original reference page · detailed expansion pending.",
    ),
]


@pytest.mark.parametrize(("body", "field", "expected"), [c[1:] for c in PAGE_CASES], ids=[c[0] for c in PAGE_CASES])
def test_concept_page_table(body: str, field: str, expected: object) -> None:
    entry = parse_concept_page(PAGE_HEAD + body, "page.txt")
    assert not isinstance(entry, Problem), entry
    assert (entry.id, entry.title, entry.source) == ("MLD-9001", "Pipeline parallelism", "page.txt:1")
    assert entry.fields[field] == expected


def test_unknown_heading_is_kept_in_the_text() -> None:
    entry = parse_concept_page(PAGE_HEAD + "Practical notes\n- Balance the stages.\n", "page.txt")
    assert not isinstance(entry, Problem), entry
    assert "Practical notes: Balance the stages." in entry.text.splitlines()


def test_short_example_without_full_stop_is_kept() -> None:
    page = PAGE_HEAD + "Original example\nTrain ResNet-50 on 8 GPUs\nOriginal caveat\nMemory matters.\n"
    entry = parse_concept_page(page, "page.txt")
    assert entry.fields["example"] == "Train ResNet-50 on 8 GPUs"
    assert "Example: Train ResNet-50 on 8 GPUs" in entry.text


def test_heading_on_line_3_is_a_missing_definition() -> None:
    page = "Systems · MLD-9002\nTensor parallelism\nOriginal example\nSplit each matmul.\n"
    result = parse_concept_page(page, "page.txt")
    assert isinstance(result, Problem)
    assert (result.path, result.line) == ("page.txt", 3)


def test_related_page_paragraphs_and_lines() -> None:
    text = "Related papers: Pipelines\n\nFirst abstract line one.\nline two.\n\n\nSecond abstract.\n"
    entries = list(parse_related_page(text, "p.txt"))
    assert [e.text for e in entries] == ["First abstract line one. line two.", "Second abstract."]
    assert [e.source for e in entries] == ["p.txt:3", "p.txt:7"]
    assert all(e.fields["anchors"] == ["Pipelines"] for e in entries)
    assert entries[0].id == abstract_id("First abstract line one. line two.")


def test_read_jsonl_reports_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "pack.jsonl"
    path.write_text(
        '{"arxiv_id": "2401.00001", "title": "A", "abstract": "Alpha."}\n\n[1, 2]\n'
        '{"term": "bubble", "definition": "Idle pipeline time."}\n',
        encoding="utf-8",
    )
    corpus = Corpus()
    read_jsonl(path, "pack.jsonl", corpus)
    assert list(corpus.entries) == ["arxiv:2401.00001", "glossary:bubble"]
    assert corpus.entries["glossary:bubble"].source == "pack.jsonl:4"
    assert corpus.problems == [Problem("pack.jsonl", 3, "expected a JSON object")]


# --- broken inputs: a Problem with file and line, and the rest still loads -------------------

GOOD_FILES = {
    "good_concept.txt": PAGE_HEAD + "Original example\nGPipe splits a model into stages.\n",
    "good_papers.txt": "Related papers: Pipelines\n\nWe study pipeline schedules. They reduce bubbles.\n",
    "good_pack.jsonl": json.dumps({"arxiv_id": "2401.00009", "title": "Good", "abstract": "A good abstract."}) + "\n",
}
GOOD_IDS = {"MLD-9001", abstract_id("We study pipeline schedules. They reduce bubbles."), "arxiv:2401.00009"}


def arxiv_line(number: int) -> str:
    return json.dumps({"arxiv_id": f"2401.0000{number}", "title": f"Paper {number}", "abstract": f"Abstract {number}."})


BROKEN = [
    # (id, {file: content (str or bytes)}, problem file, problem line, message fragment, extra ids)
    (
        "concept page missing its definition line",
        {"broken.txt": "Systems · MLD-9002\nTensor parallelism\n\nOriginal example\nSplit matmuls.\n"},
        "broken.txt",
        3,
        "definition on line 3",
        set(),
    ),
    (
        "a concept page's first line without an id",
        {"broken.txt": "Systems · \nGPU\nA processor.\n"},
        "broken.txt",
        1,
        "expected 'Section · ID' (a concept page) or 'Related papers: ...' on line 1",
        set(),
    ),
    (
        "broken JSON line in the middle",
        {"broken.jsonl": "\n".join([arxiv_line(1), '{"arxiv_id": "2401.00002", "title": ', arxiv_line(3)]) + "\n"},
        "broken.jsonl",
        2,
        "expected a JSON object",
        {"arxiv:2401.00001", "arxiv:2401.00003"},
    ),
    (
        "JSONL record missing abstract",
        {"broken.jsonl": arxiv_line(1) + "\n" + json.dumps({"arxiv_id": "2401.00004", "title": "No abstract"}) + "\n"},
        "broken.jsonl",
        2,
        "'abstract'",
        {"arxiv:2401.00001"},
    ),
    (
        "glossary record missing definition",
        {
            "broken.jsonl": json.dumps({"term": "bubble", "definition": "Idle pipeline time."})
            + "\n"
            + json.dumps({"term": "stage", "related": []})
            + "\n"
        },
        "broken.jsonl",
        2,
        "'term' and 'definition'",
        {"glossary:bubble"},
    ),
    (
        "binary file named .txt",
        {"broken.txt": b"Related papers: x\n\x00\x01\x02\x03binary\xff\xfe"},
        "broken.txt",
        0,
        "binary file",
        set(),
    ),
    (
        "non-UTF-8 text (latin-1)",
        {"broken.txt": "Related papers: Pipelines\n\nA café study of GPUs.\n".encode("latin-1")},
        "broken.txt",
        3,
        "not UTF-8",
        set(),
    ),
    (
        "unknown extension",
        {"notes.csv": "term,definition\nbubble,idle time\n"},
        "notes.csv",
        0,
        "not a knowledge file",
        set(),
    ),
    (
        "duplicate id across two files",
        {"zz_duplicate.txt": "Systems · MLD-9001\nSomething else\nA different definition.\n"},
        "zz_duplicate.txt",
        1,
        "duplicate id MLD-9001 (first read at ",
        set(),
    ),
    (
        "duplicate arXiv id across two packs",
        {"zz_pack.jsonl": json.dumps({"arxiv_id": "2401.00009", "title": "Other", "abstract": "Other text."}) + "\n"},
        "zz_pack.jsonl",
        1,
        "duplicate id arxiv:2401.00009",
        set(),
    ),
    (
        "over-large page",
        {"broken.txt": "Related papers: Big\n\n" + "word " * (MAX_PAGE_BYTES // 5 + 10)},
        "broken.txt",
        0,
        f"a page may be at most {MAX_PAGE_BYTES:,} bytes",
        set(),
    ),
]


def write_files(folder: Path, files: dict[str, str | bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content, encoding="utf-8")


@pytest.mark.parametrize(
    ("files", "problem_file", "line", "fragment", "extra_ids"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_broken_input_is_a_problem_and_the_rest_loads(
    tmp_path: Path, files: dict, problem_file: str, line: int, fragment: str, extra_ids: set[str]
) -> None:
    folder = tmp_path / "knowledge"
    write_files(folder, {**GOOD_FILES, **files})
    corpus = load_corpus([folder])
    assert len(corpus.problems) == 1, corpus.problems
    problem = corpus.problems[0]
    assert Path(problem.path).name == problem_file
    assert problem.line == line
    assert fragment in problem.message
    assert str(problem).startswith(f"{problem.path}:{line}: " if line else f"{problem.path}: ")  # 0: the whole file
    assert set(corpus.entries) == GOOD_IDS | extra_ids


def test_duplicate_problem_names_both_places_and_keeps_the_first(tmp_path: Path) -> None:
    folder = tmp_path / "knowledge"
    write_files(folder, {**GOOD_FILES, "zz_duplicate.txt": "Systems · MLD-9001\nSomething else\nAnother one.\n"})
    corpus = load_corpus([folder])
    (problem,) = corpus.problems
    assert "zz_duplicate.txt:1" in str(problem)
    assert "good_concept.txt:1" in str(problem)
    assert "kept the first" in str(problem)
    assert corpus.entries["MLD-9001"].title == "Pipeline parallelism"


def test_nonexistent_path_is_a_problem_and_the_rest_loads(tmp_path: Path) -> None:
    folder = tmp_path / "knowledge"
    write_files(folder, GOOD_FILES)
    missing = tmp_path / "no-such-folder"
    corpus = load_corpus([missing, folder])
    (problem,) = corpus.problems
    assert Path(problem.path).name == "no-such-folder"
    assert problem.line == 0
    assert "no such file or folder" in problem.message
    assert set(corpus.entries) == GOOD_IDS


def test_hidden_files_and_what_the_ignore_file_names_are_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "knowledge"
    files = {**GOOD_FILES, "README.md": "# notes\n", ".hidden.txt": "garbage\n", ".assistantignore": "README.md\n"}
    write_files(folder, files)
    corpus = load_corpus([folder])
    assert corpus.problems == []
    assert set(corpus.entries) == GOOD_IDS
    assert len(corpus.files) == 3 and corpus.ignored == 1


def test_a_single_file_path_loads(tmp_path: Path) -> None:
    write_files(tmp_path, GOOD_FILES)
    corpus = load_corpus([tmp_path / "good_concept.txt"])
    assert list(corpus.entries) == ["MLD-9001"]
    assert corpus.problems == []


def test_utf8_bom_and_crlf_pages_load(tmp_path: Path) -> None:
    page = ("\ufeff" + PAGE_HEAD + "Original caveat\nBubbles waste time.\n").replace("\n", "\r\n")
    (tmp_path / "page.txt").write_bytes(page.encode("utf-8"))
    corpus = load_corpus([tmp_path])
    assert corpus.problems == []
    entry = corpus.entries["MLD-9001"]
    assert entry.fields["caveat"] == "Bubbles waste time."
    assert "\r" not in entry.text


# --- seed abstracts: linked to their arXiv records, or a readable title -------------------------------------

LINKED = {
    "abs-c2fbfcddf4": (
        "2506.22033",
        "SiPipe: Bridging the CPU-GPU Utilization Gap for Efficient Pipeline-Parallel LLM Inference",
    ),
    "abs-a559f893fa": ("2509.26182", "Parallax: Efficient LLM Inference Service over Decentralized Environment"),
    "abs-50e2db2486": ("2506.03296", "Parallel CPU-GPU Execution for LLM Inference on Constrained GPUs"),
    "abs-fbe6a495fa": ("2510.21081", "Accelerating Mobile Inference through Fine-Grained CPU-GPU Co-Execution"),
    "abs-548c6955be": (
        "2512.07350",
        "Communication-Efficient Serving for Video Diffusion Models with Latent Parallelism",
    ),
}


def test_seed_abstracts_that_are_arxiv_records_carry_its_title_and_link(seed: Corpus) -> None:
    linked = {e.id: e for e in seed.entries.values() if e.kind == "abstract" and e.url}
    assert set(linked) == set(LINKED)  # the seed entry id is kept
    for entry_id, (arxiv, title) in LINKED.items():
        entry = linked[entry_id]
        assert (entry.title, entry.url, entry.fields["arxiv_id"]) == (title, f"https://arxiv.org/abs/{arxiv}", arxiv)
        assert entry.text.endswith("…")  # the seed's own text, not the record's


def test_the_link_needs_no_other_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linking reads a table in the package, not knowledge/mlsys (absent here) or anything outside the repo."""
    copy = tmp_path / "seed"
    shutil.copytree(SEED, copy)
    monkeypatch.chdir(tmp_path)
    entries = load_corpus([Path("seed")]).entries
    assert entries["abs-c2fbfcddf4"].url == "https://arxiv.org/abs/2506.22033"


def test_the_shipped_link_table_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/link_seed_abstracts.py", "--check"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "5 links, up to date" in done.stdout


def test_unlinked_seed_abstract_titles_read_as_titles(seed: Corpus) -> None:
    for entry in seed.entries.values():
        if entry.kind != "abstract" or entry.url:
            continue
        words = entry.title.rstrip("…").split()
        assert len(entry.title) <= TITLE_CHARS + 1 and len(words) >= 3, entry.title
        assert words[-1].lower() not in DANGLING and not entry.title.rstrip("…").endswith((",", ";", ":")), entry.title
        assert entry.title.count("(") == entry.title.count(")"), entry.title
        assert entry.text.startswith(entry.title.rstrip("…")), entry.title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Short first sentence. Then more.", "Short first sentence"),
        ("We study e.g. pipelines in depth. Then more.", "We study e.g. pipelines in depth"),
        (
            "Neural network frameworks such as PyTorch and TensorFlow are the workhorses of numerous machine "
            "learning applications.",
            "Neural network frameworks such as PyTorch and TensorFlow are the workhorses…",
        ),
        (
            "Large-scale models rely heavily on 3D parallelism for distributed training, which utilizes tensor "
            "parallelism.",
            "Large-scale models rely heavily on 3D parallelism for distributed training…",
        ),
        ("Energy efficiency compared to…", "Energy efficiency…"),  # cut by the source: never "compared to…"
        (
            "Sequence parallelism (SP), which divides the sequence dimension of input tensors across multiple "
            "devices (GPUs or NPUs in large clusters), matters.",
            "Sequence parallelism (SP), which divides the sequence dimension of input tensors…",
        ),
        ("x" * 300, "x" * 99 + "…"),
    ],
    ids=["whole", "abbreviation", "before-of", "at-comma", "source-cut", "brackets", "one-long-word"],
)
def test_readable_title(text: str, title: str) -> None:
    assert readable_title(text) == title

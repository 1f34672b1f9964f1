"""`assistant describe`: asked-as descriptions for any knowledge, written by the configured chat model.

The mlsys pack ships hand-written descriptions of how each entry is asked for by someone who lacks
its words (see `assistant.knowledge.asked_as`); a user's own knowledge has none, so its search
misses questions asked in other words. This writes them, in the same `asked-as.jsonl` format, with
whatever OpenAI-compatible model is configured (the prompt is `prompts/describe.txt`):

- only for entries that have no descriptions, or whose text changed since theirs were written (each
  record carries `for`, a digest of the text it describes; the reader ignores the field);
- `batch` entries per request; every batch is appended and flushed at once, so an interrupted run
  resumes where it stopped;
- a description that names the entry's title is dropped (it would only repeat the title's words);
- the cost is counted in tokens (cl100k, prompt and reply) and printed at the end.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant.answer.models.calls import complete, limits_of
from assistant.answer.prompts import render
from assistant.errors import AssistantError, SettingsError
from assistant.knowledge.asked_as import descriptions_of
from assistant.knowledge.corpus import load_corpus
from assistant.settings import Settings
from assistant.text import count_tokens, truncate_tokens
from assistant.types import Entry

OUT_NAME = "asked-as.jsonl"
PER_ENTRY = 3
ENTRY_TOKENS = 300  # of an entry's text shown to the model: enough to know what it is about
REPLY_LINE = re.compile(r"^\s*\[?(\d+)\]?\s*[|:.)-]\s*(.+?)\s*$")
MIN_WORDS, MAX_CHARS = 3, 300


@dataclass
class DescribeReport:
    described: int = 0  # entries that got descriptions in this run
    current: int = 0  # entries whose descriptions already fit their text
    failed: list[str] = field(default_factory=list)  # entry ids the model gave nothing usable for
    prompt_tokens: int = 0
    reply_tokens: int = 0
    out: str = ""

    def summary(self) -> str:
        failed = len(self.failed)
        return (
            f"described {self.described} entries ({self.current} already described, {failed} without a usable "
            f"reply) into {self.out}; cost: {self.prompt_tokens:,} prompt + {self.reply_tokens:,} reply tokens "
            "(cl100k count) - run: assistant index, to search with them"
        )


def text_digest(entry: Entry) -> str:
    return hashlib.sha256(f"{entry.title}\n{entry.text}".encode()).hexdigest()[:16]


def default_out(settings: Settings) -> Path:
    """`asked-as.jsonl` in the first knowledge folder, so the next sync reads it with the entries."""
    for root in map(Path, settings.knowledge):
        if root.is_dir():
            return root / OUT_NAME
    raise SettingsError(
        "The knowledge is only files, so there is no folder to write descriptions into - "
        "name one inside the knowledge: assistant describe --out FOLDER/asked-as.jsonl"
    )


def written(out: Path) -> dict[str, str | None]:
    """Entry id -> the text digest its descriptions in `out` were written for (None: not recorded)."""
    found: dict[str, str | None] = {}
    if not out.exists():
        return found
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interrupted run: described again
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            found[record["id"]] = record.get("for") if isinstance(record.get("for"), str) else None
    return found


def to_describe(entries: dict[str, Entry], out: Path) -> tuple[list[Entry], int]:
    """Entries without descriptions, or whose text changed since `out` described them; and how many are current."""
    done = written(out)
    todo, current = [], 0
    for entry in entries.values():
        if entry.id in done:
            if done[entry.id] in (None, text_digest(entry)):
                current += 1
                continue
        elif descriptions_of(entry):  # described by another file of the knowledge (a shipped pack)
            current += 1
            continue
        todo.append(entry)
    return todo, current


def batch_prompt(batch: list[Entry]) -> str:
    blocks = [f"{n}. {entry.title}\n{truncate_tokens(entry.text, ENTRY_TOKENS)}" for n, entry in enumerate(batch, 1)]
    return render("describe", per_entry=PER_ENTRY, entries="\n\n".join(blocks))


def parse_reply(reply: str, batch: list[Entry], prompt: str = "") -> dict[str, list[str]]:
    """Descriptions by entry id from `n| text` lines; ones naming the entry's title, too short or too long
    dropped, and ones the prompt itself holds (a small base model copies the example or the entry)."""
    found: dict[str, list[str]] = {entry.id: [] for entry in batch}
    for line in reply.splitlines():
        match = REPLY_LINE.match(line)
        if not match or not 1 <= int(match.group(1)) <= len(batch):
            continue
        entry = batch[int(match.group(1)) - 1]
        text = " ".join(match.group(2).strip(" \"'").split())
        title = re.sub(r"\s*\([^)]*\)", "", entry.title.split(" › ")[-1]).strip().lower()
        if len(text.split()) < MIN_WORDS or len(text) > MAX_CHARS or (title and title in text.lower()):
            continue
        if text.lower() in prompt.lower():
            continue
        if text not in found[entry.id]:
            found[entry.id].append(text)
    return {entry_id: texts[:PER_ENTRY] for entry_id, texts in found.items()}


def describe(
    settings: Settings,
    out: Path | None = None,
    *,
    batch_size: int = 4,
    limit: int | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> DescribeReport:
    """Describe the entries of `settings.knowledge` that need it, appending to `out` batch by batch."""
    from assistant.answer.models import make_chat_model

    if not settings.resolved_model.startswith("openai:"):
        raise SettingsError(
            "assistant describe needs a chat model - set OPENAI_BASE_URL (a local server, e.g. make llm) "
            "or OPENAI_API_KEY, or ASSISTANT_MODEL=openai:<model>"
        )
    out = Path(out) if out is not None else default_out(settings)
    corpus = load_corpus(settings.knowledge, follow_links=settings.follow_links)
    todo, current = to_describe(corpus.entries, out)
    if limit is not None:
        todo = todo[:limit]
    report = DescribeReport(current=current, out=out.as_posix())
    chat = make_chat_model(settings)
    # a batch's reply is a whole answer's worth of work: the full answer deadline, not a rewrite's third
    limits = replace(limits_of(chat.model), deadline=settings.answer_deadline * 3)
    try:
        handle = out.open("a", encoding="utf-8")
    except OSError as error:
        raise AssistantError(f"Cannot write {out} ({error.strerror}) - name another file with --out") from error
    with handle:
        for start in range(0, len(todo), max(1, batch_size)):
            batch = todo[start : start + max(1, batch_size)]
            prompt = batch_prompt(batch)
            reply = complete(chat.llm, [("human", prompt)], limits=limits)  # one message: small models follow it
            report.prompt_tokens += count_tokens(prompt)
            report.reply_tokens += count_tokens(reply)
            described = parse_reply(reply, batch, prompt)
            for entry in batch:
                texts = described[entry.id]
                if not texts:
                    report.failed.append(entry.id)
                    continue
                record = {"id": entry.id, "asked_as": texts, "for": text_digest(entry)}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                report.described += 1
            handle.flush()
            if on_batch is not None:
                on_batch(min(start + len(batch), len(todo)), len(todo))
    return report

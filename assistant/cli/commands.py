"""`assistant index | doctor | ask | chat | serve | eval | bench` - the command line.

Exit 0 on success; 1 on a user error with one line that says what to do, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from assistant.cli.console import log_to_stderr, status
from assistant.errors import AssistantError
from assistant.offline import offline_environment
from assistant.settings import Settings

# What `ask` and `chat` print comes from entries and from the model: neither may drive the terminal
# (clear the screen, set the window title, write the clipboard with OSC 52, hide text with \r).
_TERMINAL_SEQUENCES = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: title, clipboard, hyperlinks
    r"|(?:\x1b[P^_X]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, clearing
    r"|\x1b[ -/]*[0-~]?"  # any other escape
)
# C0 controls but tab and newline, DEL, C1 controls, and bidirectional overrides that reorder text
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
LOADING = "Loading the index and the encoder…"
MAX_LISTED = 20  # skipped files listed by `index` (all are in --json)
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # json.dumps leaves these


def terminal_text(text: str) -> str:
    """`text` safe to print to a terminal: escape sequences and control characters removed, newlines kept."""
    text = text.replace("\r\n", "\n")
    return _TERMINAL_CONTROLS.sub("", _TERMINAL_SEQUENCES.sub("", text))


def terminal_json(value: object) -> str:
    """JSON with every control character escaped as \\uXXXX (json.dumps leaves DEL and C1 raw)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant", description="Cited answers about ML systems.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("index", help="sync knowledge files into the index")
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="files or folders to index - concept pages, related-papers pages, JSON Lines packs, Markdown, "
        "text, HTML, PDF; they become the knowledge this home follows (default: what it follows, or "
        "ASSISTANT_KNOWLEDGE)",
    )
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it again")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--yes", action="store_true", help="let a sync whose knowledge yields nothing empty the index")

    sub.add_parser("doctor", help="check the index and name the command that repairs it")

    p = sub.add_parser("describe", help="write asked-as descriptions of the knowledge with the configured chat model")
    p.add_argument("--out", type=Path, help="the asked-as.jsonl to append to (default: in the first knowledge folder)")
    p.add_argument("--batch", type=int, default=4, help="entries per request (default 4)")
    p.add_argument("--limit", type=int, help="describe at most this many entries in this run")

    p = sub.add_parser("ask", help="answer one question with citations")
    p.add_argument("question")
    p.add_argument("--json", action="store_true", help="print the Answer as JSON")
    p.add_argument("--model", help="override ASSISTANT_MODEL (extractive, stub, openai:<model>)")

    p = sub.add_parser("chat", help="a conversation in the terminal (empty line or Ctrl-D to quit)")
    p.add_argument("--model", help="override ASSISTANT_MODEL")

    p = sub.add_parser("serve", help="serve the chat UI")
    p.add_argument("--host", help="default 127.0.0.1 (ASSISTANT_HOST)")
    p.add_argument("--port", type=int, help="default 7860 (ASSISTANT_PORT)")

    p = sub.add_parser("eval", help="run a question set and report retrieval, citation and refusal metrics")
    p.add_argument("--questions", type=Path, default=Path("knowledge/questions/seed.jsonl"))
    p.add_argument("--model", help="override ASSISTANT_MODEL")
    p.add_argument("--out", type=Path, default=Path("results"), help="folder for results.json, report.md, recall.png")
    p.add_argument(
        "--modes",
        default="hybrid,dense,lexical",
        help="retrieval modes to compare (add langchain for the plain recipe)",
    )
    p.add_argument("--baseline", type=Path, help="a previous results.json to compare against")
    p.add_argument("--max-drop", type=float, default=0.02, help="largest allowed fall of a headline metric")
    p.add_argument("--judge", action="store_true", help="add an LLM-judged score (needs an openai: model)")
    p.add_argument("--split", choices=("calibration", "test"), help="only the questions of this half of the set")

    p = sub.add_parser("bench", help="measure indexing, query and scale performance")
    p.add_argument("--out", type=Path, default=Path("bench/results"), help="folder for results.json and .md")
    p.add_argument("--quick", action="store_true", help="smaller scale points (for a smoke run)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    offline_environment()
    log_to_stderr()
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        if getattr(args, "model", None):
            settings = settings.with_(model=args.model)
        return COMMANDS[args.command](args, settings)
    except AssistantError as error:
        print(f"error: {terminal_text(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.assistant import Assistant

    bot = Assistant(settings, auto_index=False)
    report = bot.index(args.paths or None, rebuild=args.rebuild, allow_removal=args.yes)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    for problem in report.skipped[:MAX_LISTED]:
        print(terminal_text(f"skipped {problem}"), file=sys.stderr)
    if len(report.skipped) > MAX_LISTED:
        print(f"... and {len(report.skipped) - MAX_LISTED} more skipped (--json lists them all)", file=sys.stderr)
    for note in report.notes[:MAX_LISTED]:
        print(terminal_text(f"note: {note}"), file=sys.stderr)
    print(report.summary())
    if args.paths:
        followed = ":".join(Path(p).as_posix() for p in args.paths)
        if settings.follows_home:
            print(terminal_text(f"this home now follows {followed} (ask, chat and serve use it)"))
        else:
            print(
                terminal_text(
                    "note: ASSISTANT_KNOWLEDGE is set, so ask, chat and serve will sync back to it; "
                    f"unset it to follow {followed}"
                ),
                file=sys.stderr,
            )
    return 0


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.cli.doctor import diagnose, the_fix
    from assistant.index.freshness import followed_knowledge

    checks = diagnose(followed_knowledge(settings))
    for check in checks:
        print(check)
    if all(check.ok for check in checks):
        print("the index is healthy")
        return 0
    fix = the_fix(checks)
    print(f"fix: {fix}" if fix else "fix: see the problem above")
    return 1


def cmd_describe(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.cli.describe import describe
    from assistant.index.freshness import followed_knowledge

    def progress(done: int, total: int) -> None:
        print(f"described {done}/{total} entries", file=sys.stderr)

    report = describe(
        followed_knowledge(settings), args.out, batch_size=args.batch, limit=args.limit, on_batch=progress
    )
    for entry_id in (report.failed or [])[:MAX_LISTED]:
        print(terminal_text(f"no usable description for {entry_id}"), file=sys.stderr)
    print(terminal_text(report.summary()))
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.answer.models import StreamCutOffError
    from assistant.assistant import Assistant

    try:
        with status(LOADING):  # the first question loads the rest: a warm-up first would only add to it
            answer = Assistant(settings).ask(args.question)
    except StreamCutOffError as error:
        if args.json:
            print(terminal_json({"error": str(error), "partial": error.partial}))
        else:
            print(format_partial(error.partial))
        raise
    if args.json:
        print(terminal_json(answer.to_dict()))
    else:
        print(format_answer(answer))
    return 0


def format_partial(text: str) -> str:
    """What arrived of a reply that was cut off (the error line follows on stderr)."""
    return terminal_text(f"{text.strip()} [...]\n-- partial reply, cut off: not verified, no citations")


def format_answer(answer) -> str:
    """The answer, then numbered citations with titles, links and quotes."""
    lines = [answer.text, ""]
    for number, citation in enumerate(answer.citations, start=1):
        mark = "" if citation.supported else " (unverified)"
        link = f" {citation.url}" if citation.url else ""
        lines.append(f"[{number}] {citation.entry_id} - {citation.title}{link}{mark}")
        lines.append(f'    "{citation.quote}"')
    if answer.refused and answer.sources:
        lines.append("Nearest entries: " + "; ".join(f"{s.entry_id} ({s.title})" for s in answer.sources[:3]))
    for note in answer.notes:
        lines.append(f"note: {note}")
    lines.append(f"-- {answer.model}, {answer.timings.get('total', 0):.0f} ms")
    return terminal_text("\n".join(lines).strip())


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.answer.models import StreamCutOffError
    from assistant.assistant import Assistant

    with status(LOADING):
        bot = Assistant(settings)
        bot.load()
    history: list[tuple[str, str]] = []

    print(terminal_text(f"Ask about ML systems ({bot.model_label}). Empty line or Ctrl-D quits."))
    while True:
        try:
            question = input("> ").strip()
        except EOFError:
            print()
            return 0
        if not question:
            return 0
        try:
            with status("Answering…"):
                final = bot.ask(question, history)
            print(format_answer(final) + "\n")
            history += [("user", question), ("assistant", final.text)]
        except StreamCutOffError as error:
            print(format_partial(error.partial))
            print(f"error: {terminal_text(str(error))}\n")
        except AssistantError as error:
            print(f"error: {terminal_text(str(error))}\n")


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from ui.app import serve

    serve(settings, args.host, args.port)
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.eval.runner import run

    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    return run(
        settings,
        args.questions,
        args.out,
        modes=modes,
        baseline=args.baseline,
        max_drop=args.max_drop,
        judge=args.judge,
        split=args.split,
    )


def cmd_bench(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.bench.runner import run

    return run(settings, args.out, quick=args.quick)


COMMANDS = {
    "index": cmd_index,
    "doctor": cmd_doctor,
    "describe": cmd_describe,
    "ask": cmd_ask,
    "chat": cmd_chat,
    "serve": cmd_serve,
    "eval": cmd_eval,
    "bench": cmd_bench,
}

if __name__ == "__main__":
    sys.exit(main())

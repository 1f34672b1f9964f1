"""`assistant index | doctor | ask | chat | serve | eval | bench` - the command line.

Exit 0 on success; 1 on a user error with one line that says what to do, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from assistant.cli.answer_text import format_answer, format_partial
from assistant.cli.console import log_to_stderr, status
from assistant.cli.terminal import terminal_json, terminal_text
from assistant.errors import AssistantError, SettingsError
from assistant.offline import offline_environment
from assistant.settings import MODEL_CHOICES, RETRIEVAL_MODES, Settings

LOADING = "Loading the index and the encoder…"
MAX_LISTED = 20  # skipped files listed by `index` (all are in --json)
MODEL_HELP = f"the answering model, instead of ASSISTANT_MODEL: one of {MODEL_CHOICES}"


KNOWLEDGE_FORMATS = (
    "concept pages (.txt), related-paper pages, JSON Lines packs (arXiv papers, glossary terms, asked-as "
    "descriptions), Markdown, text, HTML and PDF"
)
EPILOG = """Run 'assistant COMMAND --help' for a command's options. Settings come from ASSISTANT_* environment
variables (ASSISTANT_HOME, ASSISTANT_KNOWLEDGE, ASSISTANT_MODEL, ...): see the README's Configuration."""


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error contract: one line naming the fix, exit 1 (argparse prints two, exits 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"error: {message} - see: {self.prog} --help\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Lists the commands one per line under "commands:", without argparse's extra `COMMAND` line."""

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):
            return "".join(self._format_action(choice) for choice in action._get_subactions())
        return super()._format_action(action)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="assistant",
        description="Cited answers about ML systems, from the knowledge you index.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    sub = parser.add_subparsers(title="commands", dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, details: str = "") -> argparse.ArgumentParser:
        """A subcommand: `summary` is its line in the command list, `details` follow it in its --help."""
        description = f"{summary[0].upper()}{summary[1:]}." + (f" {details}" if details else "")
        return sub.add_parser(name, help=summary, description=description)

    p = command(
        "index",
        "sync knowledge files into the index",
        "Only files that changed are read again. The paths named become the knowledge this home follows: "
        "ask, chat and serve use them unless ASSISTANT_KNOWLEDGE is set.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help=f"files or folders to index (default: what this home follows, else ASSISTANT_KNOWLEDGE); reads "
        f"{KNOWLEDGE_FORMATS}",
    )
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it again")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--yes",
        action="store_true",
        help="let a sync remove more than half of the index (refused otherwise: a wrong path, a half-mounted "
        "share, one file of the folder followed, other knowledge in place of what this home follows)",
    )

    command(
        "doctor",
        "check the index and name the command that repairs it",
        "Reads the index home (ASSISTANT_HOME) only: the manifest, the committed generation, leftover files "
        "and Chroma. Exits 0 when healthy, 1 with the one command that fixes it.",
    )

    p = command(
        "describe",
        "write asked-as descriptions of the knowledge with the configured chat model",
        "Only entries without descriptions, or whose text changed, are described; an interrupted run resumes. "
        "Needs an OpenAI-compatible model (OPENAI_BASE_URL or OPENAI_API_KEY).",
    )
    p.add_argument("--out", type=Path, help="the asked-as.jsonl to append to (default: in the first knowledge folder)")
    p.add_argument("--batch", type=int, default=4, help="entries per request (default 4)")
    p.add_argument("--limit", type=int, help="describe at most this many entries in this run")

    p = command("ask", "answer one question with citations", "Markers [1], [2] number the citations listed under it.")
    p.add_argument("question", help='the question, quoted: assistant ask "What is pipeline parallelism?"')
    p.add_argument("--json", action="store_true", help="print the Answer as JSON (citations by entry id)")
    p.add_argument("--model", help=MODEL_HELP)

    p = command("chat", "a conversation in the terminal", "An empty line or Ctrl-D quits.")
    p.add_argument("--model", help=MODEL_HELP)

    p = command(
        "serve",
        "serve the chat UI in the browser",
        "With ASSISTANT_CHROMA_URL it follows what other machines commit to the server (every "
        "ASSISTANT_REFRESH_SECONDS).",
    )
    p.add_argument("--host", help="address to listen on (default 127.0.0.1, or ASSISTANT_HOST)")
    p.add_argument("--port", type=int, help="TCP port (default 7860, or ASSISTANT_PORT)")
    p.add_argument(
        "--no-sync",
        action="store_true",
        help="only read the index, never sync it at start (a replica; or ASSISTANT_SYNC=off): "
        "`assistant index` is the job that writes",
    )

    p = command(
        "eval",
        "score a question set: retrieval, citations, refusals",
        "Writes results.json, report.md (every failed question) and recall.png to --out.",
    )
    p.add_argument(
        "--questions",
        type=Path,
        default=Path("knowledge/questions/seed.jsonl"),
        help="question set, JSON Lines as in knowledge/questions/ (default: knowledge/questions/seed.jsonl)",
    )
    p.add_argument("--model", help=MODEL_HELP)
    p.add_argument("--out", type=Path, default=Path("results"), help="folder for results.json, report.md, recall.png")
    p.add_argument(
        "--modes",
        default="hybrid,dense,lexical",
        help="retrieval modes to compare, comma-separated, from hybrid, dense, lexical, langchain and recipe-bm25 "
        "(the plain LangChain recipe and BM25 on its splits) (default: hybrid,dense,lexical)",
    )
    p.add_argument("--baseline", type=Path, help="a previous results.json to compare against")
    p.add_argument(
        "--max-drop", type=float, default=0.02, help="largest allowed fall of a headline metric (default 0.02)"
    )
    p.add_argument("--judge", action="store_true", help="add an LLM-judged score (needs an openai: model)")
    p.add_argument("--split", choices=("calibration", "test"), help="only the questions of this half of the set")

    p = command("bench", "measure indexing, query and scale performance")
    p.add_argument("--out", type=Path, default=Path("bench/results"), help="folder for results.json and .md")
    p.add_argument("--quick", action="store_true", help="smaller scale points (for a smoke run)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    offline_environment()
    log_to_stderr()
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # as pip and docker do: the bare command is how one asks what the commands are
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (1, its line already printed)
        return int(done.code or 0)
    try:
        if args.command == "ask" and not args.question.strip():  # before any settings, index or model work
            raise AssistantError('The question is empty - ask one: assistant ask "What is a GPU?"')
        settings = Settings.from_env()
        if getattr(args, "model", None):
            settings = with_model(settings, args.model)
        return COMMANDS[args.command](args, settings)
    except AssistantError as error:
        print(f"error: {terminal_text(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def with_model(settings: Settings, model: str) -> Settings:
    """`settings` with `--model`; an unknown one is named as the flag, with the values it takes."""
    try:
        return settings.with_(model=model)
    except SettingsError:
        raise SettingsError(f"--model {model!r} is not a model - use one of: {MODEL_CHOICES}") from None


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.assistant import Assistant
    from assistant.index.serving import knowledge_key

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
        if settings.follows_home or knowledge_key(settings.knowledge) == knowledge_key(args.paths):
            print(terminal_text(f"this home now follows {followed} (ask, chat and serve use it)"))
        else:
            print(
                terminal_text(
                    "note: ASSISTANT_KNOWLEDGE names other knowledge, which ask, chat and serve will not put "
                    f"in place of this index; unset it to follow {followed}"
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
    for entry_id in report.failed[:MAX_LISTED]:
        print(terminal_text(f"no usable description for {entry_id}"), file=sys.stderr)
    print(terminal_text(report.summary()))
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.cli.running_server import served_answer

    served = served_answer(settings, args.question)  # an `assistant serve` on this home has everything loaded
    if served is not None:
        answer, url = served
        print(terminal_json(answer.to_dict()) if args.json else format_answer(answer))
        print(terminal_text(f"answered by the assistant serve running on this home ({url})"), file=sys.stderr)
        return 0

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
    from ui.port import check_port

    check_port(args.host or settings.host, args.port or settings.port)  # before the UI's imports take seconds
    from ui.app import serve

    stop_cleanly_on(signal.SIGTERM)  # as Ctrl-C does: the server closes and removes its serving marker
    serve(settings.with_(sync_at_start=False) if args.no_sync else settings, args.host, args.port)
    return 0


def stop_cleanly_on(signum: signal.Signals) -> None:
    """Turn `signum` (whose default ends the process on the spot) into SystemExit, so `finally` blocks
    and exit handlers run: a service manager's stop leaves no `serving.json` behind."""

    def stop(received: int, _frame: object) -> None:
        raise SystemExit(128 + received)

    signal.signal(signum, stop)


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.eval.runner import run
    from assistant.index.freshness import followed_knowledge

    # the knowledge scored is the knowledge results.json names: what this home follows, unless
    # ASSISTANT_KNOWLEDGE names other (then a home that follows other knowledge refuses, never switches)
    settings = followed_knowledge(settings)

    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    unknown = [m for m in modes if m not in (*RETRIEVAL_MODES, "langchain", "recipe-bm25")]
    if unknown or not modes:
        known = ", ".join((*RETRIEVAL_MODES, "langchain", "recipe-bm25"))
        raise SettingsError(f"--modes {args.modes!r} is not a list of modes - use some of: {known}")
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

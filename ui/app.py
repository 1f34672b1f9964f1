"""The Gradio chat UI: `build_app(assistant)` and `serve(settings, host, port)`.

Handlers are thin: they call the Assistant and hand its values to the pure helpers in
`ui.render`, `ui.cards` and `ui.ratings`. Per-session state (the turns of the conversation)
lives in a `gr.State`, so concurrent users never share history.
"""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path
from typing import Any

import gradio as gr

from assistant import Assistant, Settings, SettingsError
from assistant.index.serving import mark_serving, unmark_serving
from ui.auth import ClientAddressMiddleware, LoginThrottle, trusted_proxies_for_launch
from ui.bridge import BRIDGE_JS
from ui.cards import PLACEHOLDER
from ui.handlers import FILTERS, ChatHandlers, new_session
from ui.local_api import ask_route
from ui.memory import IDLE_SECONDS, MAX_SESSIONS, SessionSweeper  # what is kept per session (ui.memory)
from ui.port import check_port, port_in_use

log = logging.getLogger("assistant")
HERE = Path(__file__).resolve().parent
CSS_PATH = HERE / "style.css"
CONCURRENCY = 4  # answering events (UI and /chat) running at once, shared across sessions
# The page's side padding (32 px a side) sits outside the part that css_paths rules reach (Gradio scopes
# them to the app's content), so the narrow-screen override goes into <head>.
HEAD = "<style>@media (max-width: 820px) { .gradio-container .main.app { padding: 8px 10px !important; } }</style>"
CHAT_PLACEHOLDER = "Ask about the knowledge shown above: tap an example below, or type a question."


def header_html(assistant: Assistant) -> str:
    """The page header for `assistant`: its knowledge and model (`ui.header`)."""
    return ChatHandlers(assistant).header()


def build_app(assistant: Assistant) -> gr.Blocks:
    """The chat UI over `assistant` (launch it with `serve`, or `.launch(css_paths=[CSS_PATH])`)."""
    h = ChatHandlers(assistant)
    private: dict[str, Any] = {"api_visibility": "private"}
    answering: dict[str, Any] = {"concurrency_limit": CONCURRENCY, "concurrency_id": "answer"}
    examples = h.examples()
    # delete_cache: exported conversations and other cached files older than a day, checked hourly
    with gr.Blocks(title="ML systems assistant", analytics_enabled=False, delete_cache=(3600, 86400)) as app:
        session = gr.State(new_session(), time_to_live=IDLE_SECONDS)
        header = gr.HTML(h.header(), elem_id="header")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=420):
                chatbot = gr.Chatbot(
                    elem_id="chat",
                    label="Conversation",
                    show_label=False,
                    height=420,
                    autoscroll=False,  # the page script keeps the newest question in view instead (ui.bridge)
                    layout="bubble",
                    sanitize_html=True,
                    render_markdown=True,
                    allow_tags=False,
                    latex_delimiters=[],
                    buttons=["copy"],
                    feedback_options=("Like", "Dislike"),
                    placeholder=CHAT_PLACEHOLDER,
                )
                with gr.Row(elem_id="ask-row", equal_height=True):
                    question = gr.Textbox(
                        show_label=False,
                        placeholder="Ask a question…",
                        scale=5,
                        min_width=120,
                        elem_id="question",
                        max_lines=4,
                        autofocus=True,
                    )
                    ask = gr.Button("Ask", variant="primary", scale=0, min_width=64, elem_id="ask")
                widen = gr.Button(
                    "Search everything for this question", size="sm", variant="primary", visible=False, elem_id="widen"
                )
                kind = gr.Radio(
                    list(FILTERS), value="Both", label="Search in", elem_id="filter", visible=h.offers_filter()
                )
                with gr.Row(elem_id="examples"):
                    example_buttons = [gr.Button(q, size="sm", variant="secondary") for q in examples]
                with gr.Row(elem_id="tools"):
                    export = gr.Button("Export as Markdown", size="sm", elem_id="export")
                    clear = gr.Button("Clear chat", size="sm", elem_id="clear")
                export_file = gr.File(label="Conversation (.md)", visible=False, elem_id="export-file")
                bridge = gr.HTML(
                    "", html_template="<span></span>", js_on_load=BRIDGE_JS, elem_id="chip-bridge", visible="hidden"
                )
            with gr.Column(scale=2, min_width=340):
                card = gr.HTML(PLACEHOLDER, elem_id="card")
                sources = gr.HTML(h.panel(new_session(), "Both"), elem_id="sources")

        outputs = [chatbot, session, question, sources, card, widen]
        inputs = [question, session, kind]
        question.submit(h.respond, inputs, outputs, **private, **answering)
        ask.click(h.respond, inputs, outputs, **private, **answering)
        for button, text in zip(example_buttons, examples, strict=True):
            button.click(lambda t=text: t, None, question, **private).then(
                h.respond, inputs, outputs, **private, **answering
            )
        widen.click(h.widen, [session], [kind, question], **private).then(
            h.respond, inputs, outputs, **private, **answering
        )
        chatbot.retry(h.retry, [session, kind], outputs, **private, **answering)
        bridge.input(h.open_target, [bridge, session, kind], [session, sources, card], **private)
        chatbot.select(h.select_message, [session, kind], [session, sources], **private)
        chatbot.like(h.like, [session], None, **private)
        kind.change(h.refilter, [session, kind], sources, **private)
        export.click(h.export, [session], export_file, **private)
        cleared = [chatbot, session, sources, card, export_file, widen]
        clear.click(h.clear, [kind], cleared, **private)
        chatbot.clear(h.clear, [kind], cleared, **private)  # the Chatbot's own trash button
        app.load(h.header, None, header, **private)  # what the index holds now, on every page load
        gr.api(h.chat_api, api_name="chat", **answering)
    return app


def app_kwargs(assistant: Assistant, token: str) -> dict[str, Any]:
    """Gradio's FastAPI app gets the client address (for the login backoff), the idle-session sweep, and
    the route that answers `assistant ask` on this home for callers holding `token` (`ui.local_api`)."""
    from starlette.middleware import Middleware

    return {
        "middleware": [Middleware(ClientAddressMiddleware), Middleware(SessionSweeper)],
        "routes": [ask_route(assistant, token, CONCURRENCY)],
    }


def theme() -> gr.themes.Base:
    """The default theme, but with Source Sans Pro's full Bold face: the SemiBold file Gradio ships
    holds only a few glyphs, so semibold text otherwise mixes fonts letter by letter."""
    font = gr.themes.LocalFont("Source Sans Pro", weights=(400, 700))
    return gr.themes.Default(font=[font, "ui-sans-serif", "system-ui", "sans-serif"])


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """`"user:password"` -> ("user", "password"); None when unset."""
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise SettingsError("ASSISTANT_UI_AUTH must look like user:password - fix it or unset it")
    return user, password


def serve(
    settings: Settings,
    host: str | None = None,
    port: int | None = None,
    *,
    block: bool = True,
    assistant: Assistant | None = None,
) -> gr.Blocks:
    """Check the port, sync and load the knowledge, the encoder and the model, then launch and say so.

    Everything slow happens before the server listens, so the first question does not wait for it,
    and a port in use is found before that work. With `block=False` the server runs in a background
    thread and the launched app is returned (call `.close()` on it). `assistant` replaces the one
    built from `settings` (tests pass fakes).
    """
    credentials = parse_auth(settings.ui_auth)
    auth = LoginThrottle(*credentials) if credentials else None  # wrong guesses back off (ui.auth)
    host, port = host or settings.host, port or settings.port
    check_port(host, port)
    bot = assistant or Assistant(settings)
    log.info("Loading the index, the encoder and the model…")
    bot.load()
    app = build_app(bot)
    app.queue(default_concurrency_limit=CONCURRENCY)
    token = secrets.token_urlsafe(32)  # `assistant ask` on this home sends it (in the serving marker)
    try:
        with trusted_proxies_for_launch(settings.trusted_proxies):  # whose X-Forwarded-For names the client
            app.launch(
                server_name=host,
                server_port=port,
                auth=auth,
                share=False,
                show_error=False,
                prevent_thread_lock=True,
                quiet=True,  # Gradio's own lines suggest share=True; we print the one line that matters
                footer_links=["api"],
                run_history=False,
                state_session_capacity=MAX_SESSIONS,
                enable_monitoring=False,
                mcp_server=False,
                ssr_mode=False,
                theme=theme(),
                css_paths=[CSS_PATH] if CSS_PATH.exists() else None,
                head=HEAD,
                app_kwargs=app_kwargs(bot, token),
            )
    except OSError as error:  # taken between the check and the launch
        raise SettingsError(port_in_use(host, port)) from error
    # the knowledge followed (not the default), and where `assistant ask` on this home can send its question
    if mark_serving(settings.home, bot.settings.knowledge, url=app.local_url, token=token) is None:
        log.info("The home %s cannot be written: no serving marker (a sync there cannot run either)", settings.home)
    if settings.chroma_url:  # other machines commit to the server: follow them
        bot.follow_commits()
        log.info("Following the commits on the Chroma server every %g s", bot.settings.refresh_seconds)
    close = app.close

    def close_and_unmark() -> None:
        bot.stop_following()
        unmark_serving(settings.home)
        close()

    app.close = close_and_unmark  # type: ignore[method-assign,assignment]
    if block:
        print(f"Ready: {app.local_url} - {bot.model_label}; Ctrl-C stops", flush=True)
        try:
            while app.is_running:
                time.sleep(0.2)
        finally:
            app.close()
    return app

"""The chat UI in a real Chromium (Playwright): streamed answer, citation chips, entry card, no XSS.

Set UPDATE_DOCS_SCREENSHOT=1 to also refresh docs/screenshot.png from the first test.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.conftest import IN_CI, REPO

pytestmark = [
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
PAYLOAD = "<img src=x onerror=alert(1)>"
XSS_PAGE = f"""Systems · TST-0001
XSS probe
An XSS probe is a test string such as {PAYLOAD} that must be shown as text.
Original example
Paste the probe into a concept page and check that the chat shows it literally.
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser):
    """open_page(settings) -> (page, dialogs seen) on a freshly served app; all close at the end."""
    from ui.app import serve

    apps, pages = [], []

    def opener(settings):
        app = serve(settings, "127.0.0.1", free_port(), block=False)
        apps.append(app)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(20_000)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        pages.append(page)
        page.goto(app.local_url, wait_until="load")
        page.locator("#question textarea").wait_for()
        return page, dialogs

    yield opener
    for page in pages:
        page.close()
    for app in apps:
        app.close()


def ask(page, question: str) -> None:
    """Type a question, submit it and wait for the final answer (the chips come with it)."""
    answers = page.locator("#chat .cite-chips").count()
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")
    page.locator("#chat .cite-chips").nth(answers).wait_for()


def test_answer_streams_in_and_a_chip_opens_the_entry_card(open_page, seed_settings):
    page, dialogs = open_page(seed_settings)
    assert "extractive (offline)" in page.locator("#header").inner_text()
    ask(page, "What is a GPU?")
    answer = page.locator("#chat .message-content").last
    assert "MLD-0472" not in answer.inner_text()  # markers became numbers
    assert "[1] GPU" in answer.inner_text()

    # a chip inside the chat message opens the card
    answer.locator(".cite-chip", has_text="[1] GPU").click()
    card = page.locator("#card .entry-card")
    card.locator(".card-title", has_text="GPU").wait_for()
    assert "MLD-0472" in card.inner_text() and "concept" in card.inner_text()
    marks = card.locator("mark").all_inner_texts()
    assert any("A processor designed for highly parallel workloads" in m for m in marks), marks
    assert "Graphics processing unit" in card.inner_text() and "NCCL" in card.inner_text()
    assert "MLD-0472" in page.locator("#sources").inner_text()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-answer.png"))
    if os.environ.get("UPDATE_DOCS_SCREENSHOT"):
        page.screenshot(path=str(REPO / "docs" / "screenshot.png"))

    # the chips under the chat (a Radio) open cards too, here for the next answer's first citation
    ask(page, "How can LLM inference be made serverless?")
    page.locator("#card .entry-card.empty").wait_for()
    chip = page.locator("#chips label").first
    title = chip.inner_text().removeprefix("[1] ").split("…")[0].split(" · ")[0].strip()
    chip.click()
    card.locator(".card-title", has_text=title).wait_for()
    assert card.locator(".card-num").inner_text() == "[1]" and card.locator("mark").count() >= 1
    assert dialogs == []


def test_entry_html_is_shown_as_text_never_run(open_page, tmp_path):
    from assistant import Settings

    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    (knowledge / "probe.txt").write_text(XSS_PAGE, encoding="utf-8")
    page, dialogs = open_page(Settings(home=tmp_path / "home", knowledge=(knowledge,), model="extractive"))

    ask(page, f"What is an XSS probe? {PAYLOAD}")
    chat = page.locator("#chat")
    assert PAYLOAD in chat.locator(".message-content").first.inner_text()  # the question, shown literally
    assert PAYLOAD in chat.locator(".message-content").last.inner_text()  # the answer quotes the definition
    page.locator("#chips label").first.click()
    card = page.locator("#card .entry-card")
    card.locator(".card-title", has_text="XSS probe").wait_for()
    assert PAYLOAD in card.inner_text()
    assert PAYLOAD in " ".join(card.locator("mark").all_inner_texts())
    page.wait_for_timeout(300)  # give a (broken) onerror handler the chance to fire
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("#chat img, #card img").count() == 0
    assert dialogs == []

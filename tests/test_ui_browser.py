"""The chat UI in a real Chromium (Playwright), at desktop (1280×800) and phone (390×844) size.

Header truth, derived examples, citation markers opening cards (in view on a phone), source rows,
copy and retry, the filter and the panel agreeing, visible streaming from an LLM, no XSS.
Set UPDATE_DOCS_SCREENSHOT=1 to also refresh docs/screenshot.png from the first test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import IN_CI, REPO
from tests.processes import free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PAYLOAD = "<img src=x onerror=alert(1)>"
XSS_PAGE = f"""Systems · TST-0001
XSS probe
An XSS probe is a test string such as {PAYLOAD} that must be shown as text.
Original example
Paste the probe into a concept page and check that the chat shows it literally.
"""


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
    """open_page(settings, viewport) -> (page, dialogs seen) on a freshly served app; all close at the end."""
    from ui.app import serve

    apps, contexts = [], []

    def opener(settings, viewport=DESKTOP):
        app = serve(settings, "127.0.0.1", free_port(), block=False)
        apps.append(app)
        context = browser.new_context(viewport=viewport, has_touch=viewport["width"] < 600)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app.local_url.rstrip("/"))
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(app.local_url, wait_until="load")
        page.locator("#question textarea").wait_for()
        return page, dialogs

    yield opener
    for context in contexts:
        context.close()
    for app in apps:
        app.close()


def answers(page) -> int:
    return page.locator("#chat .message-row.bot-row").count()


def wait_answered(page, turn: int) -> None:
    """The final answer of `turn` is in: its sources panel (sent with the verified answer) is shown."""
    page.locator(f"#sources .sources.for-turn-{turn}").wait_for()


def ask(page, question: str) -> None:
    """Type a question, submit it and wait for the final answer."""
    turn = answers(page)
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")
    wait_answered(page, turn)


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return bool(box) and box["y"] >= 0 and box["x"] >= 0 and box["y"] + box["height"] <= size["height"] + 1


def test_desktop_header_examples_citation_card_sources_and_copy(open_page, seed_settings):
    page, dialogs = open_page(seed_settings)
    header = page.locator("#header").inner_text()
    for text in ("knowledge/seed", "1 concept", "59 papers", "chunks", "indexed", "extractive (offline)"):
        assert text in header, header
    examples = page.locator("#examples button").all_inner_texts()
    assert examples[0] == "What is a GPU?" and any(e.startswith("Which papers address") for e in examples)

    page.locator("#examples button").first.click()
    wait_answered(page, 0)
    answer = page.locator("#chat .message-content").last
    assert "MLD-0472" not in answer.inner_text() and "[1]" in answer.inner_text()  # markers became numbers
    assert page.locator("#chat .cite-chip, #chips").count() == 0  # one citation display, not three

    # an inline number opens the card, with the supporting quote highlighted
    answer.locator(".cite-ref").first.click()
    card = page.locator("#card .entry-card")
    card.locator(".card-title", has_text="GPU").wait_for()
    assert "MLD-0472" in card.inner_text() and "concept" in card.inner_text()
    marks = card.locator("mark").all_inner_texts()
    assert any("A processor designed for highly parallel workloads" in m for m in marks), marks
    assert in_viewport(page, card.locator(".card-title"))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-desktop.png"))
    if os.environ.get("UPDATE_DOCS_SCREENSHOT"):
        page.screenshot(path=str(REPO / "docs" / "screenshot.png"))

    # the sources: a rank, the citation number, no score; a row opens its entry
    sources = page.locator("#sources")
    assert "score" not in sources.inner_text().lower() and "[1]" in sources.locator("tr.src-row").first.inner_text()
    row = sources.locator("tr.src-row").nth(1)
    title = row.locator(".stitle").get_attribute("title")
    row.click()
    card.locator(".card-title", has_text=title[:30]).wait_for()

    # copy copies what the reader sees: numbers, not the markup behind them
    page.locator("#chat .message-row.bot-row").last.hover()
    page.locator('#chat .message-buttons-left button[aria-label="Copy message"]').last.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("A processor designed for highly parallel workloads") and "[1]" in copied, copied
    assert "<span" not in copied and "cite-" not in copied
    assert dialogs == []


def test_phone_header_is_compact_and_a_tapped_citation_opens_in_view(open_page, seed_settings):
    page, dialogs = open_page(seed_settings, PHONE)
    header = page.locator("#header").bounding_box()
    assert header["y"] + header["height"] < PHONE["height"] / 4  # not half the first screen
    box = page.locator("#question textarea")
    fits = box.evaluate(
        """el => { const c = document.createElement('canvas').getContext('2d');
                   c.font = getComputedStyle(el).font;
                   return c.measureText(el.placeholder).width <= el.clientWidth; }"""
    )
    assert fits, "the question placeholder is clipped"
    assert page.locator("#card .entry-card.empty").is_hidden()  # no empty card taking the screen

    ask(page, "What is a GPU?")
    page.locator("#chat .cite-ref").first.tap()
    card = page.locator("#card .entry-card")
    card.locator(".card-title", has_text="GPU").wait_for()
    assert in_viewport(page, card), card.bounding_box()  # a sheet over the page, not 1,000 px below
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-card.png"))
    card.locator(".card-close").tap()
    card.wait_for(state="hidden")
    page.locator("#chat .cite-ref").first.tap()  # the same citation again opens it again
    card.wait_for(state="visible")
    assert in_viewport(page, card)

    # a source row opens its entry in view too
    card.locator(".card-close").tap()
    row = page.locator("#sources tr.src-row").nth(1)
    title = row.locator(".stitle").get_attribute("title")
    row.tap()
    card.locator(".card-title", has_text=title[:30]).wait_for()
    assert in_viewport(page, card)
    assert dialogs == []


def test_filter_panel_refusal_and_retry_agree(open_page, seed_settings):
    page, _ = open_page(seed_settings)
    page.locator("#filter label", has_text="Concepts").click()
    ask(page, "What is a GPU?")
    panel = page.locator("#sources")
    assert "concepts only" in panel.inner_text()
    kinds = panel.locator("tr.src-row .kind").all_inner_texts()
    assert kinds and set(kinds) == {"concept"}, kinds  # the panel lists what the answer searched, nothing else

    # a refusal under a filter says so and offers to search everything
    page.locator("#filter label", has_text="Abstracts").click()
    panel.get_by_text("applies to the next question").wait_for()  # the earlier answer keeps its own label
    assert "Searched: concepts only" in panel.inner_text()
    ask(page, "What is NCCL used for?")
    assert "Only paper abstracts were searched" in page.locator("#chat .message-content").last.inner_text()
    assert set(panel.locator("tr.src-row .kind").all_inner_texts()) == {"paper"}
    widen = page.locator("#widen")
    widen.click()
    wait_answered(page, 2)
    assert page.locator("#filter input[value='Both']").is_checked()
    last = page.locator("#chat .message-content").last.inner_text()
    assert "[1]" in last and "cannot answer" not in last and "MLD-0472" in panel.inner_text()
    assert widen.is_hidden()

    # retry asks the question again, with the filter now set
    page.locator("#filter label", has_text="Abstracts").click()
    page.locator("#chat .message-row.bot-row").last.hover()
    page.locator('#chat button[aria-label="Retry"]').last.click()
    page.get_by_text("Only paper abstracts were searched").nth(1).wait_for()
    assert answers(page) == 3 and widen.is_visible()


def test_streaming_from_an_llm_is_visible(open_page, seed_settings):
    from tests.fake_openai import FakeOpenAI, Trickle

    words = " ".join(["A GPU is a processor designed for highly parallel workloads [MLD-0472]."] * 4)
    with FakeOpenAI() as fake:
        fake.script(Trickle(words, every=0.08))
        settings = seed_settings.with_(
            model="openai:test", openai_base_url=fake.base_url, openai_api_key="sk-test", max_retries=0
        )
        page, _ = open_page(settings)
        assert "openai" in page.locator("#header").inner_text()
        page.locator("#question textarea").fill("What is a GPU?")
        page.locator("#question textarea").press("Enter")
        # part of the reply is on screen while the answer is still coming (its panel not yet sent)
        page.locator("#chat .message-row.bot-row", has_text="A GPU is a processor").wait_for()
        assert page.locator("#sources .sources.for-turn-0").count() == 0
        partial = page.locator("#chat .message-content").last.inner_text()
        wait_answered(page, 0)
        final = page.locator("#chat .message-content").last.inner_text()
        assert len(partial) < len(final) and final.count("A GPU is a processor") == 4


def test_entry_html_is_shown_as_text_never_run(open_page, tmp_path):
    from assistant import Settings

    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    (knowledge / "probe.txt").write_text(XSS_PAGE, encoding="utf-8")
    page, dialogs = open_page(Settings(home=tmp_path / "home", knowledge=(knowledge,), model="extractive"))

    assert "What is an XSS probe?" in page.locator("#examples button").all_inner_texts()
    ask(page, f"What is an XSS probe? {PAYLOAD}")
    chat = page.locator("#chat")
    assert PAYLOAD in chat.locator(".message-content").first.inner_text()  # the question, shown literally
    assert PAYLOAD in chat.locator(".message-content").last.inner_text()  # the answer quotes the definition
    chat.locator(".cite-ref").first.click()
    card = page.locator("#card .entry-card")
    card.locator(".card-title", has_text="XSS probe").wait_for()
    assert PAYLOAD in card.inner_text()
    assert PAYLOAD in " ".join(card.locator("mark").all_inner_texts())
    page.wait_for_timeout(300)  # give a (broken) onerror handler the chance to fire
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("#chat img, #card img").count() == 0
    assert dialogs == []


def newest_question_and_answer_start(page) -> tuple[dict, dict, dict]:
    """Boxes of the newest question, of its answer's first two lines, and of the chat's visible area."""
    return page.evaluate(
        """() => {
          const chat = document.querySelector('#chat');
          const question = [...chat.querySelectorAll('.message-row.user-row')].pop();
          const answer = [...chat.querySelectorAll('.message-row.bot-row')].pop();
          const box = r => ({top: r.top, bottom: r.bottom});
          const text = answer.querySelector('.message-content').getBoundingClientRect();
          return [box(question.getBoundingClientRect()), {top: text.top, bottom: text.top + 40},
                  box(chat.getBoundingClientRect())];
        }"""
    )


def assert_newest_question_in_view(page) -> None:
    page.wait_for_timeout(400)  # the page script scrolls on the next animation frame
    question, answer, chat = newest_question_and_answer_start(page)
    height = page.viewport_size["height"]
    for box in (question, answer):  # inside the chat's visible part, and on the screen
        assert chat["top"] - 1 <= box["top"] and box["bottom"] <= chat["bottom"] + 1, (box, chat)
        assert box["top"] >= 0 and box["bottom"] <= height, (box, height)


def test_phone_keeps_the_newest_question_and_its_answer_in_view(open_page, seed_settings):
    page, dialogs = open_page(seed_settings, PHONE)
    examples = page.locator("#examples button").all_inner_texts()
    assert examples == [
        "What is a GPU?",
        "Which papers address LLM inference?",
        "Which papers address distributed training?",
        "Which papers address dynamic parallelism?",
    ]
    for question in examples[:3]:  # long answers: the chat overflows from the second one
        ask(page, question)
        assert_newest_question_in_view(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-newest-question.png"))

    # an example tapped from the bottom of the page: the page comes back up to the question
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.locator("#examples button").nth(3).tap()
    wait_answered(page, 3)
    assert_newest_question_in_view(page)
    assert dialogs == []

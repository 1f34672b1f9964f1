"""The page script behind citation taps, source rows, the card's close button and copy.

It runs as the `js_on_load` of a hidden gr.HTML "bridge" (see `ui.app`), where `props` and `trigger`
are the bridge's own. A tap on a citation number in the chat or on a row of the sources panel sets
the bridge's value to "turn|entry id|nonce" and fires its input event; the server answers with the
entry's card (`ChatHandlers.open_target`). Turn and id travel as class tokens (cite-turn-N,
cite-id-ID) because the Chatbot's sanitizer drops data-* attributes. A message's copy button copies
what the reader sees (citation numbers), not the markup behind them, which Gradio's own copy takes.
When a question is added, the chat scrolls so that question sits at the top of the chat with the
start of its answer below it (the Chatbot's own autoscroll is off: it follows the end of a long
answer, which on a phone puts the question and the answer's first lines off screen).
It is a Python string, not a .js file, so it ships with the package without package-data.
"""

BRIDGE_JS = """
window.__citeBridge = { props: props, trigger: trigger };
if (!window.__citeBridgeListening) {
  window.__citeBridgeListening = true;
  var TARGETS = "#chat .cite-ref, #sources .src-row";
  function openTarget(target) {
    var turn = "", entry = "";
    target.classList.forEach(function (name) {
      if (name.indexOf("cite-turn-") === 0) turn = name.slice(10);
      if (name.indexOf("cite-id-") === 0) entry = name.slice(8);
    });
    if (!entry || !window.__citeBridge) return;
    document.querySelectorAll("#card .entry-card.closed").forEach(function (card) { card.classList.remove("closed"); });
    window.__citeBridge.props.value = turn + "|" + entry + "|" + Date.now();
    window.__citeBridge.trigger("input");
  }
  document.addEventListener("click", function (event) {
    var el = event.target;
    if (!el || !el.closest) return;
    var target = el.closest(TARGETS);
    if (target) { openTarget(target); return; }
    if (el.closest("#card .card-close")) {
      var card = el.closest(".entry-card");
      if (card) card.classList.add("closed");
      return;
    }
    // a message's buttons follow its bubble (.message-row) as the next sibling
    var copy = el.closest('#chat button[aria-label="Copy message"]');
    var buttons = copy && copy.closest(".message-buttons");
    var message = buttons && buttons.previousElementSibling;
    var isRow = message && message.classList.contains("message-row");
    var content = isRow ? message.querySelector(".message-content") : null;
    if (content && navigator.clipboard) {
      event.stopPropagation();
      event.preventDefault();
      navigator.clipboard.writeText(content.innerText.trim());
      copy.classList.add("copied");
      setTimeout(function () { copy.classList.remove("copied"); }, 1500);
    }
  }, true);
  // the newest question is brought to the top of the chat, and held there while its answer grows
  // until it reaches the top (a short chat cannot scroll yet) or the reader scrolls themselves
  var questionsShown = 0, pinned = null;
  function scroller(el, chat) {
    for (var node = el.parentElement; node && node !== chat.parentElement; node = node.parentElement) {
      var overflow = getComputedStyle(node).overflowY;
      if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) return node;
    }
    return null;
  }
  function showNewestQuestion() {
    var chat = document.querySelector("#chat");
    var questions = chat ? chat.querySelectorAll(".message-row.user-row") : [];
    if (questions.length !== questionsShown) {
      var grew = questions.length > questionsShown;
      questionsShown = questions.length;
      pinned = grew ? questions[questions.length - 1] : null;
    }
    if (!pinned || !pinned.isConnected) { pinned = null; return; }
    var box = scroller(pinned, chat);
    if (box) {
      var offset = pinned.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
      if (Math.abs(offset) > 2) box.scrollTop += offset;
    }
    // the page too: an example tapped at the bottom of a phone's page brings the chat back up
    var question = pinned.getBoundingClientRect(), top = chat.getBoundingClientRect().top;
    if (question.top < 0 || question.bottom > window.innerHeight) window.scrollBy(0, Math.min(top, question.top) - 8);
    var atTop = box && Math.abs(pinned.getBoundingClientRect().top - box.getBoundingClientRect().top - 8) <= 2;
    if (atTop && pinned.getBoundingClientRect().top >= 0) pinned = null;  // until then, held as the answer grows
  }
  function letGo() { pinned = null; }
  document.addEventListener("wheel", letGo, { passive: true });
  document.addEventListener("touchmove", letGo, { passive: true });
  new MutationObserver(function () { requestAnimationFrame(showNewestQuestion); })
    .observe(document.body, { childList: true, subtree: true, characterData: true });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" && event.key !== " ") return;
    var target = event.target && event.target.closest ? event.target.closest("#sources .src-row") : null;
    if (target) { event.preventDefault(); openTarget(target); }
  });
}
"""

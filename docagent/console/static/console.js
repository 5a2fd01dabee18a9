// docagent console: the little JavaScript it has. The pages work without it.
"use strict";

// An action's button is pressed once: the form is disabled while it is sent (the server acts once anyway).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.classList.contains("once")) return;
  if (form.dataset.sent) { event.preventDefault(); return; }
  form.dataset.sent = "1";
  const pressed = event.submitter;
  if (pressed && pressed.name) {  // keep the pressed button's value once it is disabled
    const value = document.createElement("input");
    value.type = "hidden"; value.name = pressed.name; value.value = pressed.value;
    form.appendChild(value);
  }
  setTimeout(() => form.querySelectorAll("button").forEach((button) => { button.disabled = true; }), 0);
});

// Pages of a running job refresh their live part every few seconds, unless the reader is in a form.
const seconds = Number(document.body.dataset.refresh || 0);
if (seconds > 0) {
  setInterval(async () => {
    const active = document.activeElement;
    if (active && active.closest("form")) return;
    const answer = await fetch(window.location.href, { headers: { "Accept": "text/html" } });
    if (!answer.ok) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
    const live = document.getElementById("live");
    const next = fresh.getElementById("live");
    if (live && next) live.replaceWith(next);
  }, seconds * 1000);
}

// A field's evidence: its page's text with the quote's span (offsets from the grounding check) highlighted.
document.addEventListener("click", (event) => {
  const link = event.target.closest(".evidence-link");
  if (!link) return;
  const old = document.getElementById("evidence-highlight");
  if (old) { const parent = old.parentNode; old.replaceWith(...old.childNodes); parent.normalize(); }
  if (link.dataset.start === undefined) return;  // a box only: drawn on the page's image (pages.js)
  const page = document.getElementById(`page-${link.dataset.page}`);
  const text = page && page.firstChild;
  if (!text || text.nodeType !== Node.TEXT_NODE) return;
  const range = document.createRange();
  range.setStart(text, Math.min(Number(link.dataset.start), text.length));
  range.setEnd(text, Math.min(Number(link.dataset.end), text.length));
  const mark = document.createElement("mark");
  mark.id = "evidence-highlight";
  mark.dataset.path = link.dataset.path;
  range.surroundContents(mark);
  mark.scrollIntoView({ block: "center" });
});

// A correction's evidence: the text the reviewer selected on a page, with its offsets in the page's text
// (the server checks the quote is there: docagent/operations/review_evidence.py).
document.addEventListener("click", (event) => {
  const button = event.target.closest(".evidence-pick");
  if (!button) return;
  const target = document.getElementById(button.dataset.target);
  const output = document.getElementById(button.dataset.output);
  const selection = window.getSelection();
  const range = selection && selection.rangeCount ? selection.getRangeAt(0) : null;
  const start = range && range.startContainer;
  const page = start && (start.nodeType === Node.ELEMENT_NODE ? start : start.parentElement).closest("pre.page");
  const quote = range ? range.toString() : "";
  if (!page || !quote.trim()) { output.textContent = "select the text on a page of the document first"; return; }
  const before = document.createRange();
  before.setStart(page, 0);
  before.setEnd(range.startContainer, range.startOffset);
  const offset = before.toString().length;
  target.value = JSON.stringify({ page: Number(page.dataset.page), quote, start: offset, end: offset + quote.length });
  output.textContent = `page ${page.dataset.page}: “${quote}”`;
});

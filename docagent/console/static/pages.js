// docagent console: a field's evidence box drawn over its page's image (docagent/console/pages.py).
// The box is ratios of the page's width and height (FieldEvidence.box), so it is placed in CSS percentages
// over the image, whatever size the image is shown at; a field without a box keeps its text highlight.
"use strict";

document.addEventListener("click", (event) => {
  const link = event.target.closest(".evidence-link");
  if (!link) return;
  const old = document.getElementById("evidence-box");
  if (old) old.remove();
  if (!link.dataset.box) return;
  const frame = document.querySelector(`#page-image-${link.dataset.page} .page-frame`);
  if (!frame) return;
  const [left, top, width, height] = link.dataset.box.split(" ").map(Number);
  if (![left, top, width, height].every(Number.isFinite)) return;
  const clamp = (value) => Math.min(Math.max(value, 0), 1);
  const x = clamp(left), y = clamp(top);
  const box = document.createElement("div");
  box.id = "evidence-box";
  box.className = "evidence-box";
  box.dataset.path = link.dataset.path;
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", `The evidence of ${link.dataset.path} on page ${link.dataset.page}`);
  // CSSOM properties, not a style attribute: the console's CSP allows no inline style.
  box.style.left = `${x * 100}%`;
  box.style.top = `${y * 100}%`;
  box.style.width = `${(clamp(x + width) - x) * 100}%`;
  box.style.height = `${(clamp(y + height) - y) * 100}%`;
  frame.appendChild(box);
  box.scrollIntoView({ block: "center" });
});

// IMProofBench grading page, the keyboard and touch side: shortcuts for the grade, the indicators' help, the list
// of keys, "Submit and next", and the question panel in focus mode. Saving is grading.js's (window.tbGrading).
// No key fires while the grader types in a text box, a select or anything editable; Ctrl+Enter works there too.
// Every help opens by click or tap, by Enter or Space (they are buttons), and by a key: "?" and "h".
"use strict";
(function () {
  var api = window.tbGrading;
  var form = document.getElementById("grade-form");
  var keysToggle = document.getElementById("keys-toggle");
  var keysHelp = document.getElementById("keys-help");
  var refToggle = document.getElementById("reference-toggle");
  var rows = form ? Array.prototype.slice.call(form.querySelectorAll("fieldset[data-indicator]")) : [];
  var active = -1;
  var CHOICE_KEYS = { t: "true", f: "false", s: "not_sure", a: "na" };

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag !== "INPUT") return false;
    return ["radio", "checkbox", "button", "submit", "reset"].indexOf((target.type || "text").toLowerCase()) === -1;
  }

  // -- the marked indicator row --------------------------------------------------------------------------------------
  function mark(index) {
    if (!rows.length) return;
    if (active >= 0) { rows[active].classList.remove("key-active"); rows[active].removeAttribute("aria-current"); }
    active = Math.max(0, Math.min(rows.length - 1, index));
    rows[active].classList.add("key-active");
    rows[active].setAttribute("aria-current", "true");
    if (rows[active].scrollIntoView) rows[active].scrollIntoView({ block: "nearest" });
  }

  function firstUnset() {
    for (var i = 0; i < rows.length; i++) if (!rows[i].querySelector("input:checked")) return i;
    return 0;
  }

  function choose(value) {
    if (active < 0) mark(firstUnset());
    var input = rows[active].querySelector('input[value="' + value + '"]');
    if (!input) return; // N/A only where it is offered (Correct Result of an open problem)
    if (!input.checked) input.click(); // a click: the change reaches grading.js's autosave as a pointer's would
    if (active < rows.length - 1) mark(active + 1);
  }

  function progress(value) {
    var input = form.querySelector('input[name="progress"][value="' + value + '"]');
    if (input && !input.checked) input.click();
  }

  // -- helps: each indicator's meaning, and the list of keys ----------------------------------------------------------
  function toggleTip(button) {
    var text = document.getElementById(button.getAttribute("aria-controls"));
    var open = text.hidden;
    text.hidden = !open;
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function toggleKeys(open) {
    if (open === undefined) open = keysHelp.hidden;
    keysHelp.hidden = !open;
    keysToggle.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function reference(on) {
    document.body.classList.toggle("show-reference", on);
    refToggle.setAttribute("aria-pressed", on ? "true" : "false");
    try { window.localStorage.setItem("tb-show-reference", on ? "1" : "0"); } catch (e) { /* storage off */ }
  }

  // -- moving on ---------------------------------------------------------------------------------------------------
  function go(url) {
    api.flush().then(function (ok) { if (ok) window.location.href = url; });
  }

  // Mark complete (unless given up), save, and open the next answer still to grade; when the server names fields
  // still missing, stay and take the grader to the first of them.
  function submitNext() {
    if (!form || !api) return;
    var status = form.querySelector('[name="status"]');
    if (status.value === "incomplete") {
      status.value = "complete";
      status.dispatchEvent(new Event("change", { bubbles: true }));
    }
    api.flush().then(function (ok) {
      if (!ok) return;
      if (api.incomplete()) {
        var missing = form.querySelector("fieldset.missing");
        var at = rows.indexOf(missing);
        if (at >= 0) mark(at);
        var radio = missing ? missing.querySelector("input") : null;
        if (radio) radio.focus();
        return;
      }
      window.location.href = form.getAttribute("data-next-url");
    });
  }

  function onKey(event) {
    if (event.defaultPrevented) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submitNext();
      return;
    }
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key;
    var handled = true;
    if (key === "?") {
      if (event.target.classList && event.target.classList.contains("tip")) toggleTip(event.target);
      else toggleKeys();
    } else if (key === "Escape") {
      if (!keysHelp.hidden) toggleKeys(false); else handled = false;
    } else if (key === "r" && refToggle) {
      reference(!document.body.classList.contains("show-reference"));
    } else if (!form) {
      handled = false;
    } else if (key >= "0" && key <= "3" && key.length === 1) {
      progress(key);
    } else if (key === "j") {
      mark(active + 1);
    } else if (key === "k") {
      mark(active < 0 ? 0 : active - 1);
    } else if (CHOICE_KEYS[key]) {
      choose(CHOICE_KEYS[key]);
    } else if (key === "h") {
      if (active < 0) mark(firstUnset());
      toggleTip(rows[active].querySelector("button.tip"));
    } else if (key === "c") {
      form.querySelector('[name="comment"]').focus();
    } else if (key === "n") {
      go(form.getAttribute("data-next-url"));
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  }

  document.addEventListener("keydown", onKey);
  var tips = document.querySelectorAll("button.tip");
  for (var i = 0; i < tips.length; i++) tips[i].addEventListener("click", function () { toggleTip(this); });
  keysToggle.addEventListener("click", function () { toggleKeys(); });
  if (refToggle) {
    refToggle.addEventListener("click", function () { reference(!document.body.classList.contains("show-reference")); });
    try { if (window.localStorage.getItem("tb-show-reference") === "1") reference(true); } catch (e) { /* off */ }
  }
  var submit = document.getElementById("submit-next");
  if (submit) submit.addEventListener("click", submitNext);
})();

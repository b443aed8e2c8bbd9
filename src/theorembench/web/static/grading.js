// IMProofBench blind grading page: autosave of the grade and the notes, focus mode. No inline code (CSP 'self').
// A save goes 2 s after the last change. A 409 answer (saved elsewhere meanwhile) is never overwritten: the page
// says "Conflict: reload" and stops saving until it is reloaded. After the reveal a grade save is kept as a
// correction beside the grade, and the page says so.
"use strict";
(function () {
  var DEBOUNCE_MS = 2000;
  var state = document.getElementById("autosave-state");
  var reload = document.getElementById("conflict-reload");
  var form = document.getElementById("grade-form");
  var notes = document.getElementById("grading-notes");
  var timer = null;
  var busy = false;
  var conflict = false;
  var correction = false;
  var units = [];

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function show(kind, text) {
    state.setAttribute("data-state", kind);
    state.textContent = text;
  }

  function gradeBody() {
    var checked = form.querySelector('input[name="progress"]:checked');
    var indicators = {};
    var sets = form.querySelectorAll("fieldset[data-indicator]");
    for (var i = 0; i < sets.length; i++) {
      var on = sets[i].querySelector("input:checked");
      if (on) indicators[sets[i].getAttribute("data-indicator")] = on.value;
    }
    return {
      progress: checked ? checked.value : "",
      indicators: JSON.stringify(indicators),
      comment: form.querySelector('[name="comment"]').value,
      status: form.querySelector('[name="status"]').value
    };
  }

  function unit(el, body) {
    return { el: el, body: body, dirty: false };
  }

  if (form) units.push(unit(form, gradeBody));
  if (notes) units.push(unit(notes, function () { return { notes: notes.value }; }));

  function post(u, keepalive) {
    var body = u.body();
    body.revision = u.el.getAttribute("data-revision");
    return fetch(u.el.getAttribute("data-save-url"), {
      method: "POST", credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body)
    });
  }

  function tabStatus(status) {
    if (!form) return;
    var alias = form.getAttribute("data-save-url").split("/").pop();
    var small = document.querySelector('[data-testid="answer-tab-status-' + alias + '"]');
    if (small) small.textContent = status.replace("_", " ");
  }

  function saveOne(u) {
    u.dirty = false;
    return post(u).then(function (r) {
      return r.json().then(function (data) { return { status: r.status, data: data }; });
    }).then(function (answer) {
      if (answer.status === 200) {
        u.el.setAttribute("data-revision", String(answer.data.revision));
        if (answer.data.status) tabStatus(answer.data.status);
        if (answer.data.correction) correction = true;
        return;
      }
      if (answer.status === 409) {
        conflict = true;
        throw new Error("conflict");
      }
      u.dirty = true;
      throw new Error(answer.data.error || ("status " + answer.status));
    });
  }

  // Save every changed unit, one request at a time; resolves once nothing is left to save.
  function flush() {
    clearTimeout(timer);
    timer = null;
    if (conflict) return Promise.resolve(false);
    if (busy) return new Promise(function (done) { setTimeout(function () { done(flush()); }, 50); });
    var todo = units.filter(function (u) { return u.dirty; });
    if (!todo.length) return Promise.resolve(true);
    busy = true;
    show("saving", "Saving…");
    var chain = Promise.resolve();
    todo.forEach(function (u) { chain = chain.then(function () { return saveOne(u); }); });
    return chain.then(function () {
      busy = false;
      if (units.some(function (u) { return u.dirty; })) schedule();
      else show("saved", correction ? "Saved as a correction" : "Saved");
      return true;
    }, function (err) {
      busy = false;
      if (conflict) {
        show("conflict", "Conflict: reload");
        reload.hidden = false;
      } else {
        show("error", "Not saved: " + err.message);
      }
      return false;
    });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(flush, DEBOUNCE_MS);
  }

  function changed(u) {
    if (conflict) return;
    u.dirty = true;
    show("pending", "Unsaved changes");
    schedule();
  }

  units.forEach(function (u) {
    u.el.addEventListener("input", function () { changed(u); });
    u.el.addEventListener("change", function () { changed(u); });
  });

  reload.addEventListener("click", function () { window.location.reload(); });

  // Leaving through an answer tab saves first; closing the page sends what is left without waiting.
  var links = document.querySelectorAll("a[data-flush]");
  for (var i = 0; i < links.length; i++) {
    links[i].addEventListener("click", function (event) {
      if (!units.some(function (u) { return u.dirty; }) || conflict) return;
      event.preventDefault();
      var href = this.getAttribute("href");
      flush().then(function (ok) { if (ok) window.location.href = href; });
    });
  }
  window.addEventListener("pagehide", function () {
    if (conflict || busy) return;
    units.forEach(function (u) { if (u.dirty) { u.dirty = false; post(u, true); } });
  });

  // Focus mode: hides the site header and the question column; remembered in this browser.
  var toggle = document.getElementById("focus-toggle");
  function focus(on) {
    document.body.classList.toggle("focus-mode", on);
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    try { window.localStorage.setItem("tb-focus-mode", on ? "1" : "0"); } catch (e) { /* storage off */ }
  }
  toggle.addEventListener("click", function () { focus(!document.body.classList.contains("focus-mode")); });
  try { if (window.localStorage.getItem("tb-focus-mode") === "1") focus(true); } catch (e) { /* storage off */ }
})();

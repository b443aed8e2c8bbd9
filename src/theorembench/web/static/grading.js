// IMProofBench blind grading page: autosave of the grade and the notes, local drafts, conflicts, focus mode.
// No inline code (CSP 'self'). A save goes 2 s after the last change. Until the server has a change, the unsaved
// values stay in this browser's localStorage (one entry per page part and user), and a reload restores them.
// A 409 answer (saved elsewhere meanwhile) never overwrites and never discards: the page keeps what was typed,
// shows both versions, and the grader keeps theirs, takes the other or merges them. A grade marked complete too
// early is saved as incomplete, and the fields still to fill in are named and highlighted. After the reveal a grade
// save is kept as a correction beside the grade, and the page says so.
"use strict";
(function () {
  var DEBOUNCE_MS = 2000;
  var page = document.getElementById("grading");
  var state = document.getElementById("autosave-state");
  var panel = document.getElementById("conflict-panel");
  var form = document.getElementById("grade-form");
  var notes = document.getElementById("grading-notes");
  var owner = page.getAttribute("data-draft-owner") || "";
  var timer = null;
  var busy = false;
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

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // -- the grade's values: read from and written to the form ------------------------------------------------------
  function gradeValues() {
    var checked = form.querySelector('input[name="progress"]:checked');
    var indicators = {};
    var sets = form.querySelectorAll("fieldset[data-indicator]");
    for (var i = 0; i < sets.length; i++) {
      var on = sets[i].querySelector("input:checked");
      if (on) indicators[sets[i].getAttribute("data-indicator")] = on.value;
    }
    return { progress: checked ? checked.value : "", indicators: indicators,
             comment: form.querySelector('[name="comment"]').value, status: form.querySelector('[name="status"]').value };
  }

  function setGrade(v) {
    var radios = form.querySelectorAll('input[type="radio"]');
    for (var i = 0; i < radios.length; i++) {
      var name = radios[i].name;
      var want = name === "progress" ? String(v.progress === null ? "" : v.progress) : (v.indicators || {})[name.slice(4)];
      radios[i].checked = radios[i].value === want;
    }
    form.querySelector('[name="comment"]').value = v.comment || "";
    form.querySelector('[name="status"]').value = v.status || "incomplete";
  }

  function choiceText(name, value) {
    var input = form.querySelector('input[name="' + name + '"][value="' + value + '"]');
    return input ? input.parentNode.textContent.trim() : "not set";
  }

  // The grade fields as the page labels them, with a stored or a local grade's value shown as the page shows it.
  function gradeFields(v) {
    var out = [{ label: "Overall progress", value: v.progress === "" || v.progress === null ? "not set"
                 : choiceText("progress", String(v.progress)) }];
    var sets = form.querySelectorAll("fieldset[data-indicator]");
    for (var i = 0; i < sets.length; i++) {
      var name = sets[i].getAttribute("data-indicator");
      var value = (v.indicators || {})[name];
      out.push({ label: sets[i].querySelector("legend").firstChild.textContent.trim(),
                 value: value ? choiceText("ind-" + name, value) : "not set" });
    }
    var status = form.querySelector('[name="status"] option[value="' + (v.status || "incomplete") + '"]');
    out.push({ label: "Status", value: status ? status.textContent : v.status });
    return out;
  }

  function mergeText(mine, theirs) {
    if (mine === theirs || theirs.indexOf(mine) !== -1) return theirs;
    if (mine.indexOf(theirs) !== -1) return mine;
    return mine + "\n\n" + theirs;
  }

  function unit(opts) {
    opts.dirty = false;
    opts.stale = null; // the stored values of a conflict not yet resolved
    opts.key = "tb-draft:" + owner + ":" + opts.el.getAttribute("data-save-url");
    return opts;
  }

  if (form) {
    units.push(unit({ el: form, what: "Answer " + form.getAttribute("data-save-url").split("/").pop(),
      values: gradeValues, apply: setGrade, text: "comment",
      body: function (v) { return { progress: v.progress, indicators: JSON.stringify(v.indicators),
                                    comment: v.comment, status: v.status }; },
      fields: gradeFields,
      merge: function (mine, theirs) {
        var indicators = {};
        Object.keys(theirs.indicators || {}).forEach(function (k) { indicators[k] = theirs.indicators[k]; });
        Object.keys(mine.indicators).forEach(function (k) { indicators[k] = mine.indicators[k]; });
        return { progress: mine.progress !== "" ? mine.progress : (theirs.progress === null ? "" : String(theirs.progress)),
                 indicators: indicators, comment: mergeText(mine.comment, theirs.comment || ""), status: mine.status };
      } }));
  }
  if (notes) {
    units.push(unit({ el: notes, what: "Your notes", text: "notes",
      values: function () { return { notes: notes.value }; },
      apply: function (v) { notes.value = v.notes || ""; },
      body: function (v) { return { notes: v.notes }; },
      fields: function () { return []; },
      merge: function (mine, theirs) { return { notes: mergeText(mine.notes, theirs.notes || "") }; } }));
  }

  // -- drafts in this browser --------------------------------------------------------------------------------------
  function keepDraft(u) {
    try {
      window.localStorage.setItem(u.key, JSON.stringify({ values: u.values(), revision: u.el.getAttribute("data-revision") }));
    } catch (e) { /* storage off or full: the page still holds the text */ }
  }

  function dropDraft(u) {
    try { window.localStorage.removeItem(u.key); } catch (e) { /* storage off */ }
  }

  function restoreDrafts() {
    var restored = false;
    units.forEach(function (u) {
      var draft = null;
      try { draft = JSON.parse(window.localStorage.getItem(u.key) || "null"); } catch (e) { draft = null; }
      if (!draft || !draft.values) return;
      if (JSON.stringify(draft.values) === JSON.stringify(u.values())) { dropDraft(u); return; }
      u.apply(draft.values);
      u.el.setAttribute("data-revision", String(draft.revision)); // a newer save elsewhere then answers 409
      u.dirty = true;
      restored = true;
    });
    if (restored) {
      show("pending", "Restored unsaved changes from this browser");
      schedule();
    }
  }

  // -- saving ------------------------------------------------------------------------------------------------------
  function post(u, keepalive) {
    var body = u.body(u.values());
    body.revision = u.el.getAttribute("data-revision");
    return fetch(u.el.getAttribute("data-save-url"), {
      method: "POST", credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body)
    });
  }

  function tabStatus(status, final) {
    if (!form) return;
    var alias = form.getAttribute("data-save-url").split("/").pop();
    var small = document.querySelector('[data-testid="answer-tab-status-' + alias + '"]');
    if (small) small.textContent = status.replace("_", " ");
    var tab = document.querySelector('[data-testid="answer-tab-' + alias + '"]');
    if (tab && final !== undefined) tab.classList.toggle("final", !!final);
  }

  // The progress bar: answers graded to the end (complete or given up) of those this grader has here.
  function progressCounts(data) {
    if (data.graded === undefined) return;
    var bar = document.getElementById("grading-progress-bar");
    bar.max = Math.max(1, data.to_grade);
    bar.value = data.graded;
    document.querySelector('[data-testid="grading-graded"]').textContent = String(data.graded);
    document.querySelector('[data-testid="grading-to-grade"]').textContent = String(data.to_grade);
  }

  function highlight(missing) {
    if (!form) return;
    var marked = form.querySelectorAll("fieldset.missing");
    for (var i = 0; i < marked.length; i++) { marked[i].classList.remove("missing"); marked[i].removeAttribute("aria-invalid"); }
    (missing || []).forEach(function (m) {
      var set = form.querySelector(m.name === "progress" ? 'fieldset[data-field="progress"]'
                                                         : 'fieldset[data-indicator="' + m.name + '"]');
      if (set) { set.classList.add("missing"); set.setAttribute("aria-invalid", "true"); }
    });
  }

  // The fields a grade marked complete still lacks: named above the form (a fixed place, so that nothing moves under
  // the pointer while the grader fills them in) and highlighted.
  var incomplete = false;
  var missingNote = document.getElementById("grade-missing");
  function missingFields(missing, message) {
    incomplete = !!(missing && missing.length);
    highlight(missing);
    missingNote.textContent = incomplete ? message : "";
    missingNote.hidden = !incomplete;
  }

  function saveOne(u) {
    u.dirty = false;
    return post(u).then(function (r) {
      if (r.redirected) return { status: 401, data: { error: "you are signed out: sign in again" } };
      return r.json().then(function (data) { return { status: r.status, data: data }; },
                           function () { return { status: r.status, data: {} }; });
    }, function () {
      u.dirty = true; // the server was not reached: saved with the next change, and kept in this browser meanwhile
      throw new Error("the server could not be reached");
    }).then(function (answer) {
      if (answer.status === 200) {
        u.el.setAttribute("data-revision", String(answer.data.revision));
        if (u.dirty) keepDraft(u); else dropDraft(u);
        if (answer.data.status) tabStatus(answer.data.status, answer.data.final);
        progressCounts(answer.data);
        if (answer.data.correction) correction = true;
        if (u.el === form) missingFields(answer.data.missing, answer.data.message);
        return;
      }
      u.dirty = true;
      keepDraft(u);
      if (answer.status === 409 && answer.data.current) {
        u.stale = answer.data.current;
        conflictPanel();
        return;
      }
      var signedOut = answer.status === 401 || answer.status === 403;
      throw new Error(answer.data.error || (signedOut ? "you may be signed out: sign in again" : "status " + answer.status));
    });
  }

  function saveable(u) { return u.dirty && !u.stale; }

  // Save every changed unit not in conflict, one request at a time; resolves true once nothing is left to save.
  function flush() {
    clearTimeout(timer);
    timer = null;
    if (busy) return new Promise(function (done) { setTimeout(function () { done(flush()); }, 50); });
    var todo = units.filter(saveable);
    if (!todo.length) return Promise.resolve(!units.some(function (u) { return u.stale; }));
    busy = true;
    show("saving", "Saving…");
    var chain = Promise.resolve();
    todo.forEach(function (u) { chain = chain.then(function () { return saveOne(u); }); });
    return chain.then(function () {
      busy = false;
      if (units.some(function (u) { return u.stale; })) {
        show("conflict", "Conflict: saved elsewhere meanwhile; your version is kept below the bar");
        return false;
      }
      if (units.some(saveable)) schedule();
      else if (incomplete) show("incomplete", "Saved, not yet complete");
      else show("saved", correction ? "Saved as a correction" : "Saved");
      return true;
    }, function (err) {
      busy = false;
      show("error", "Not saved (kept in this browser): " + err.message);
      return false;
    });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(flush, DEBOUNCE_MS);
  }

  function changed(u, event) {
    u.dirty = true;
    keepDraft(u);
    var set = event && event.target.closest ? event.target.closest("fieldset.missing") : null;
    if (set) { set.classList.remove("missing"); set.removeAttribute("aria-invalid"); }
    if (u.stale) return; // saved once the grader has chosen in the conflict panel
    show("pending", "Unsaved changes");
    schedule();
  }

  // -- the conflict panel: both versions, and the grader's choice ----------------------------------------------------
  function resolve(u, how) {
    var theirs = u.stale;
    var mine = u.values();
    if (how === "theirs") u.apply(theirs);
    if (how === "merge") u.apply(u.merge(mine, theirs));
    u.el.setAttribute("data-revision", String(theirs.revision));
    u.stale = null;
    conflictPanel();
    if (how === "theirs") {
      u.dirty = false;
      dropDraft(u);
      show("saved", "Took the version saved elsewhere");
      return;
    }
    u.dirty = true;
    keepDraft(u);
    if (how === "mine") { flush(); return; }
    show("pending", "Merged: check the text; it is saved in 2 s");
    schedule();
    var box = u.el === form ? form.querySelector('[name="comment"]') : notes;
    box.focus();
  }

  function conflictBlock(u) {
    var mine = u.values();
    var theirs = u.stale;
    var slug = u.el === form ? "grade" : "notes";
    var box = el("div", { "class": "conflict-unit", "data-testid": "conflict-" + slug });
    box.appendChild(el("h2", {}, u.what + " was saved elsewhere (another tab or device) after you opened this page."));
    box.appendChild(el("p", {}, "Your version is kept on this page and in this browser; nothing is overwritten " +
                                "until you choose."));
    var table = el("table", { "class": "conflict-fields" });
    var head = el("tr");
    ["", "Saved elsewhere", "Yours"].forEach(function (t) { head.appendChild(el("th", {}, t)); });
    table.appendChild(head);
    var a = u.fields(theirs);
    var b = u.fields(mine);
    for (var i = 0; i < a.length; i++) {
      var row = el("tr", a[i].value === b[i].value ? {} : { "class": "differs" });
      row.appendChild(el("th", {}, a[i].label));
      row.appendChild(el("td", {}, a[i].value));
      row.appendChild(el("td", {}, b[i].value));
      table.appendChild(row);
    }
    if (a.length) box.appendChild(table);
    var texts = el("div", { "class": "conflict-texts" });
    [["Saved elsewhere", theirs[u.text] || "", "theirs"], ["Yours", mine[u.text] || "", "mine"]].forEach(function (t) {
      var col = el("div");
      col.appendChild(el("h3", {}, t[0] + (u.text === "comment" ? ": comment" : "")));
      col.appendChild(el("pre", { "data-testid": "conflict-" + slug + "-text-" + t[2] }, t[1] || "(empty)"));
      texts.appendChild(col);
    });
    box.appendChild(texts);
    var actions = el("p", { "class": "actions" });
    [["mine", "Keep mine", "keep-mine"], ["theirs", "Take theirs", "take-theirs"], ["merge", "Merge both", "merge"]]
      .forEach(function (c) {
      var button = el("button", { type: "button", "data-testid": "conflict-" + slug + "-" + c[2],
                                  "class": c[0] === "mine" ? "" : "secondary" }, c[1]);
      button.addEventListener("click", function () { resolve(u, c[0]); });
      actions.appendChild(button);
    });
    box.appendChild(actions);
    return box;
  }

  function conflictPanel() {
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    var open = units.filter(function (u) { return u.stale; });
    open.forEach(function (u) { panel.appendChild(conflictBlock(u)); });
    panel.hidden = !open.length;
  }

  units.forEach(function (u) {
    u.el.addEventListener("input", function (event) { changed(u, event); });
    u.el.addEventListener("change", function (event) { changed(u, event); });
  });
  restoreDrafts();

  // Leaving through an answer tab saves first; closing the page sends what is left without waiting. Either way the
  // unsaved values stay in this browser until the server has them.
  var links = document.querySelectorAll("a[data-flush]");
  for (var i = 0; i < links.length; i++) {
    links[i].addEventListener("click", function (event) {
      if (!units.some(saveable)) return;
      event.preventDefault();
      var href = this.getAttribute("href");
      flush().then(function (ok) { if (ok) window.location.href = href; });
    });
  }
  window.addEventListener("pagehide", function () {
    if (busy) return;
    units.forEach(function (u) { if (saveable(u)) post(u, true).catch(function () { /* kept in this browser */ }); });
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

  // For grading_keys.js (the shortcuts and "Submit and next"): save now, and whether the grade still lacks fields.
  window.tbGrading = { flush: flush, incomplete: function () { return incomplete; } };
})();

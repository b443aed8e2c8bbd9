// IMProofBench platform: math typesetting with KaTeX and the live Markdown preview. No build step, no inline code.
"use strict";
(function () {
  // trust off (no \href, \url, \includegraphics, \htmlClass ... links or attributes), expansion and size limits on
  var KATEX_OPTIONS = { trust: false, maxExpand: 1000, maxSize: 50, throwOnError: true, strict: "ignore", output: "htmlAndMathml" };

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  // Typeset every element with data-math ("inline" or "display") under root; its text is the TeX source.
  function typeset(root) {
    if (typeof window.katex === "undefined") return;
    var nodes = (root || document).querySelectorAll("[data-math]:not([data-math-done])");
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      var tex = el.textContent;
      var options = Object.assign({}, KATEX_OPTIONS, { displayMode: el.getAttribute("data-math") === "display" });
      try {
        window.katex.render(tex, el, options);
      } catch (err) {
        // KaTeX's own error rendering sets an inline style, which the CSP refuses: show the source, marked, and
        // KaTeX's message next to it as text (a tooltip alone is missed, and unreachable by touch)
        showError(el, tex, String((err && err.message) || err));
      }
      el.setAttribute("data-math-done", "1");
      el.setAttribute("data-tex", tex);
    }
  }

  function showError(el, tex, message) {
    var source = document.createElement("code");
    source.className = "math-source";
    source.textContent = tex;
    var text = document.createElement("span");
    text.className = "math-error-text";
    text.setAttribute("data-testid", "math-error");
    text.textContent = message;
    el.textContent = "";
    el.appendChild(source);
    el.appendChild(document.createTextNode(" "));
    el.appendChild(text);
    el.classList.add("math-error");
    el.title = message;
  }

  // The sanitised HTML of Markdown+LaTeX text (POST /preview, the server's one renderer); math is left untypeset.
  function renderPreview(text) {
    return fetch("/preview", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrfToken() },
      body: new URLSearchParams({ text: text }).toString()
    }).then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); });
  }

  // A textarea with data-preview-target="ID" shows its rendering (POST /preview, sanitised on the server) in #ID.
  function wirePreview(area) {
    var target = document.getElementById(area.getAttribute("data-preview-target"));
    if (!target || area.hasAttribute("data-preview-wired")) return;
    area.setAttribute("data-preview-wired", "1");
    var timer = null;
    var seq = 0;
    function refresh() {
      var mine = ++seq;
      renderPreview(area.value)
        .then(function (html) {
          if (mine !== seq) return; // a newer request is under way
          target.innerHTML = html; // sanitised by the server (nh3); math stays text until typeset
          typeset(target);
          target.setAttribute("data-preview-ready", String(mine));
        })
        .catch(function () { target.setAttribute("data-preview-error", "1"); });
    }
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(refresh, 300);
    });
    if (area.value) refresh();
  }

  // The question editor (editor.js) leaves the names of fields whose LaTeX does not typeset here when it saves;
  // the page the save leads to says so once, above its content.
  var LATEX_NOTE = "tb-latex-not-typeset";

  function showLatexNote() {
    var names = null;
    try {
      names = JSON.parse(window.sessionStorage.getItem(LATEX_NOTE) || "null");
      window.sessionStorage.removeItem(LATEX_NOTE);
    } catch (err) {
      return;
    }
    var main = document.querySelector("main");
    if (!Array.isArray(names) || !names.length || !main) return;
    var refused = document.querySelector('[data-testid="form-error"]'); // the save was refused: say no "Saved"
    var note = document.createElement("p");
    note.className = "notice latex-warning";
    note.setAttribute("role", "status");
    note.setAttribute("data-testid", "latex-warning");
    note.textContent = (refused ? "" : "Saved. ") + "The LaTeX in " + names.join(", ") +
      " does not typeset: each error is shown in red next to its source.";
    main.insertBefore(note, main.firstChild);
  }

  // A table wider than the screen scrolls inside its own box, not the whole page (a phone is 390 px wide).
  function boxTables(root) {
    var tables = root.querySelectorAll("main table");
    for (var i = 0; i < tables.length; i++) {
      var table = tables[i];
      if (table.closest(".table-scroll, .diff-scroll, .question-history")) continue;
      var box = document.createElement("div");
      box.className = "table-scroll";
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    }
  }

  function start() {
    boxTables(document);
    typeset(document);
    var areas = document.querySelectorAll("textarea[data-preview-target]");
    for (var i = 0; i < areas.length; i++) wirePreview(areas[i]);
    showLatexNote();
  }

  window.TB = { typeset: typeset, csrfToken: csrfToken, katexOptions: KATEX_OPTIONS, renderPreview: renderPreview,
                wirePreview: wirePreview, latexNoteKey: LATEX_NOTE };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

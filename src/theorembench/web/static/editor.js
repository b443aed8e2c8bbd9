// IMProofBench question editor: add and remove subquestion rows. Rows are numbered as they are made; the server
// reads whatever numbers arrive (gaps are fine) and drops rows left blank. Each text field has a live preview
// (app.js). Saving first typesets every field as the preview does; the save goes ahead either way, and the page
// it leads to names the fields whose LaTeX does not typeset (app.js reads the names from sessionStorage).
"use strict";
(function () {
  // "Statement", or "Subquestion 2 rationale" for a field of the second row on the page
  function fieldName(area, rows) {
    var name = area.getAttribute("data-latex-field");
    var row = area.closest(".sub-row");
    if (!row) return name;
    return "Subquestion " + (Array.prototype.indexOf.call(rows.querySelectorAll(".sub-row"), row) + 1) + " " + name;
  }

  function doesNotTypeset(area) {
    if (!area.value.trim()) return Promise.resolve(false);
    return window.TB.renderPreview(area.value).then(function (html) {
      var probe = document.createElement("div");
      probe.innerHTML = html; // sanitised by the server (nh3)
      window.TB.typeset(probe);
      return probe.querySelector(".math-error") !== null;
    }).catch(function () { return false; }); // the save itself will say what is wrong with the connection
  }

  function checkOnSave(form, rows) {
    var checked = false;
    form.addEventListener("submit", function (event) {
      if (checked || !window.TB || typeof window.katex === "undefined") return;
      event.preventDefault();
      var submitter = event.submitter || null;
      var areas = Array.prototype.slice.call(form.querySelectorAll("textarea[data-latex-field]"));
      Promise.all(areas.map(doesNotTypeset)).then(function (broken) {
        var names = areas.filter(function (area, k) { return broken[k]; })
          .map(function (area) { return fieldName(area, rows); });
        try {
          if (names.length) window.sessionStorage.setItem(window.TB.latexNoteKey, JSON.stringify(names));
          else window.sessionStorage.removeItem(window.TB.latexNoteKey);
        } catch (err) { /* storage refused: the errors still show in place on the saved page */ }
        checked = true;
        if (form.requestSubmit) form.requestSubmit(submitter);
        else form.submit();
      });
    });
  }

  function start() {
    var rows = document.getElementById("sub-rows");
    var template = document.getElementById("sub-row-template");
    var add = document.getElementById("add-subquestion");
    if (!rows || !template || !add) return;
    var form = document.getElementById("question-form");
    if (form) checkOnSave(form, rows);
    var next = parseInt(rows.getAttribute("data-next-index") || "0", 10) || 0;

    add.addEventListener("click", function () {
      var i = String(next++);
      rows.setAttribute("data-next-index", String(next));
      var fragment = template.content.cloneNode(true);
      var named = fragment.querySelectorAll("[data-name], [data-id], [data-for], [data-preview]");
      var made = { "data-name": "name", "data-id": "id", "data-for": "for", "data-preview": "data-preview-target" };
      for (var k = 0; k < named.length; k++) {
        var el = named[k];
        for (var from in made) {
          if (!el.hasAttribute(from)) continue;
          el.setAttribute(made[from], el.getAttribute(from).replace("__i__", i));
          el.removeAttribute(from);
        }
      }
      var row = fragment.querySelector(".sub-row");
      rows.appendChild(fragment);
      var previewed = row ? row.querySelectorAll("textarea[data-preview-target]") : [];
      for (var p = 0; p < previewed.length; p++) window.TB.wirePreview(previewed[p]);
      var first = row && row.querySelector("textarea");
      if (first) first.focus();
    });

    rows.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("[data-remove-sub]") : null;
      if (!button) return;
      var row = button.closest(".sub-row");
      if (row) row.parentNode.removeChild(row);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

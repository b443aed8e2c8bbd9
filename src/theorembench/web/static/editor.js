// IMProofBench question editor: add and remove subquestion rows. Rows are numbered as they are made; the server
// reads whatever numbers arrive (gaps are fine) and drops rows left blank.
"use strict";
(function () {
  function start() {
    var rows = document.getElementById("sub-rows");
    var template = document.getElementById("sub-row-template");
    var add = document.getElementById("add-subquestion");
    if (!rows || !template || !add) return;
    var next = parseInt(rows.getAttribute("data-next-index") || "0", 10) || 0;

    add.addEventListener("click", function () {
      var i = String(next++);
      rows.setAttribute("data-next-index", String(next));
      var fragment = template.content.cloneNode(true);
      var named = fragment.querySelectorAll("[data-name], [data-id], [data-for]");
      for (var k = 0; k < named.length; k++) {
        var el = named[k];
        if (el.hasAttribute("data-name")) el.setAttribute("name", el.getAttribute("data-name").replace("__i__", i));
        if (el.hasAttribute("data-id")) el.setAttribute("id", el.getAttribute("data-id").replace("__i__", i));
        if (el.hasAttribute("data-for")) el.setAttribute("for", el.getAttribute("data-for").replace("__i__", i));
        el.removeAttribute("data-name");
        el.removeAttribute("data-id");
        el.removeAttribute("data-for");
      }
      var row = fragment.querySelector(".sub-row");
      rows.appendChild(fragment);
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

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
        // KaTeX's own error rendering sets an inline style, which the CSP refuses: show the source, marked
        el.textContent = tex;
        el.classList.add("math-error");
        el.title = String((err && err.message) || err);
      }
      el.setAttribute("data-math-done", "1");
      el.setAttribute("data-tex", tex);
    }
  }

  // A textarea with data-preview-target="ID" shows its rendering (POST /preview, sanitised on the server) in #ID.
  function wirePreview(area) {
    var target = document.getElementById(area.getAttribute("data-preview-target"));
    if (!target) return;
    var timer = null;
    var seq = 0;
    function refresh() {
      var mine = ++seq;
      fetch("/preview", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrfToken() },
        body: new URLSearchParams({ text: area.value }).toString()
      }).then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
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

  function start() {
    typeset(document);
    var areas = document.querySelectorAll("textarea[data-preview-target]");
    for (var i = 0; i < areas.length; i++) wirePreview(areas[i]);
  }

  window.TB = { typeset: typeset, csrfToken: csrfToken, katexOptions: KATEX_OPTIONS };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

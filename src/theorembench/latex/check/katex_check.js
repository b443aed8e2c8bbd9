#!/usr/bin/env node
// Parse a batch of TeX math segments with KaTeX; used by theorembench.latex.check.katex.
//
// stdin: one JSON object
//   {"katex": "<directory of the katex package>",
//    "macros": {"\\R": "\\mathbb{R}", ...},
//    "segments": [{"tex": "...", "display": true|false}, ...]}
// stdout: one JSON line per segment, in order, written as soon as it is parsed,
//   {"i": 0, "ok": true} or {"i": 0, "ok": false, "message": "...", "position": 12}
//   (a message is cut to 500 characters, so the output stays small whatever the input),
// then {"done": true, "version": "<katex version>"}.
// A setup problem (no katex, bad input) is one line {"fatal": "..."} and exit status 2.
//
// Nothing is written anywhere but stdout; KaTeX reads no files.
"use strict";

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function main(raw) {
  let job;
  try {
    job = JSON.parse(raw);
  } catch (err) {
    emit({fatal: "bad input: " + err.message});
    process.exit(2);
  }
  let katex;
  try {
    katex = require(job.katex);
  } catch (err) {
    emit({fatal: "cannot load katex from " + job.katex + ": " + err.message});
    process.exit(2);
  }
  const macros = job.macros || {};
  const segments = job.segments || [];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const options = {
      displayMode: !!seg.display,
      throwOnError: true,
      strict: false, // accept unicode text in math, as a lenient web viewer does
      trust: false,
      maxExpand: 1000,
      maxSize: 50,
      // a fresh copy per segment: a \gdef in one segment must not leak into the next
      macros: Object.assign({}, macros),
    };
    try {
      katex.renderToString(seg.tex, options);
      emit({i: i, ok: true});
    } catch (err) {
      const isParse = err instanceof katex.ParseError;
      let message = isParse && err.rawMessage ? err.rawMessage : String(err && err.message ? err.message : err);
      if (message.length > 500) message = message.slice(0, 499) + "\u2026"; // bounded output per segment
      const out = {i: i, ok: false, message: isParse ? message : "KaTeX internal error: " + message};
      if (isParse && typeof err.position === "number") out.position = err.position;
      emit(out);
    }
  }
  emit({done: true, version: katex.version});
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => main(input));

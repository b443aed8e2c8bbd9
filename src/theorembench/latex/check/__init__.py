"""LaTeX validity checks for generated item strings: KaTeX per math segment, pdflatex per item.

Every string that may reach the benchmark (a stem, an option) is checked twice:

* **KaTeX** (:func:`check_katex`, module ``katex``) parses each math segment
  (module ``segments``) the way a web viewer renders it: ``throwOnError``
  semantics, strict mode off (unicode in math is accepted), the paper's macros
  (module ``katex_macros``) through KaTeX's ``macros`` option. All segments of a
  batch go to one ``node`` process (``katex_check.js``, next to these modules).
* **pdflatex** (:func:`check_pdflatex`, module ``pdflatex``) compiles one small
  document (module ``pdflatex_document``) holding every string, each in its own
  paragraph between two marker macros, with amsmath, amssymb, amsthm, mathtools,
  bm and the paper's (sanitised, module ``preamble``) macro definitions. This is
  the authoritative check. The first error of the log (its ``! ...`` line and
  ``l.<n>``) is mapped back to the string it came from; the marker after each
  string also catches what TeX would let pass silently (a string that ends inside
  math mode or leaves a brace group or environment open).

:func:`check_item` (module ``item``) runs both (concurrently) and merges the
reports (module ``report``); :func:`check_item_async` is the same check for code on
an event loop (it runs in a worker thread). A report is ``ok`` only when it is both
``passed`` (no issue) and ``complete`` (every engine checked every segment and string):
an engine that could not run, a spent time budget or the compile cap leave it incomplete.

Safety
    pdflatex runs with ``-no-shell-escape -halt-on-error -interaction=nonstopmode
    -draftmode`` in a fresh temporary directory (its working and output
    directory), with a minimal environment: ``openin_any=p`` / ``openout_any=p``
    (no reading or writing absolute paths or ``..``; ``\\input{/etc/passwd}``
    fails), ``HOME``/``TEXMFVAR`` inside the temporary directory, font and
    format generation (``mktex*``) off, stdin closed. The paper preamble is
    sanitised first (:func:`sanitize_preamble`). Both engines run under a
    timeout; a run that does not finish is killed with its process group and
    reported as an issue, never waited on. Output is bounded (module ``process``):
    at most a fixed number of bytes of each engine's output is read (past it the
    engine is killed and the string charged with an output-limit issue), the TeX log
    is capped on disk by a file-size limit and only its head is read, and the
    engines run under CPU-time (and, for pdflatex, address-space) limits.

Availability
    An engine that cannot run is listed in ``LatexReport.skipped`` with the
    reason (the report is then not ``ok``: nothing was checked); nothing is raised.
    :func:`available` (module ``engines``) says which
    engines can run. ``THEOREMBENCH_LATEX_PATH`` replaces ``PATH`` when looking
    for ``node`` and ``pdflatex`` (and is the ``PATH`` pdflatex runs with);
    ``THEOREMBENCH_KATEX_DIR`` names the KaTeX package (the ``katex`` folder, a
    ``node_modules`` folder holding it, or a prefix with ``node_modules/katex``).
    By default KaTeX is looked for where ``scripts/setup.sh`` installs it:
    ``<venv>/node/node_modules/katex``.
"""

from theorembench.latex.check.engines import KATEX_DIR_ENV, KATEX_VERSION, PATH_ENV, available
from theorembench.latex.check.item import check_item, check_item_async
from theorembench.latex.check.katex import check_katex
from theorembench.latex.check.katex_macros import katex_macros_from_preamble
from theorembench.latex.check.pdflatex import check_pdflatex
from theorembench.latex.check.preamble import sanitize_preamble
from theorembench.latex.check.report import LatexIssue, LatexReport
from theorembench.latex.check.segments import Segment, math_segments, scan_math

__all__ = [
    "KATEX_DIR_ENV",
    "KATEX_VERSION",
    "PATH_ENV",
    "LatexIssue",
    "LatexReport",
    "Segment",
    "available",
    "check_item",
    "check_item_async",
    "check_katex",
    "check_pdflatex",
    "katex_macros_from_preamble",
    "math_segments",
    "sanitize_preamble",
    "scan_math",
]

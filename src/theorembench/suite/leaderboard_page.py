"""The leaderboard's page: one HTML file, its tables, and Vega-Lite specs its charts are drawn from.

Tables are rendered here (escaped by Jinja2); charts are Vega-Lite specifications embedded in the
page as JSON and drawn in the browser by the site's local copy of Vega-Embed. The specs use only
numbers the tables show, so a chart and its table never disagree.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import jinja2

from theorembench.common.stats import Estimate

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"  # an identifier, never fetched

_PAGE = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string("""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<link rel="stylesheet" href="leaderboard.css">
<script src="vega/vega.min.js"></script>
<script src="vega/vega-lite.min.js"></script>
<script src="vega/vega-embed.min.js"></script>
</head>
<body>
<header><h1>{{ title }}</h1>
<p>Each score is the share of items answered correctly (or the mean graded score) with its 95% interval and n.
Rank ranges come from paired bootstrap tests on the items two models share: models whose ranges overlap are not
told apart by the data. <a href="leaderboard.json">leaderboard.json</a> holds every number.</p></header>
<main>
{% for group in groups %}
<section class="group" id="{{ group.anchor }}">
<h2>{{ group.method_name }} <span class="release">{{ group.release }}</span></h2>
<div class="chart" data-chart="{{ group.anchor }}-scores" role="img"
     aria-label="Scores with 95% intervals, {{ group.method_name }}, {{ group.release }}"></div>
<div class="table-wrap"><table>
<thead><tr><th>rank</th><th>model</th><th>score [95% CI] n</th><th>errors</th><th>cost / item</th>
<th>contamination guard</th><th>sources</th></tr></thead>
<tbody>
{% for e in group.entries %}
<tr><td class="num">{{ e.rank_text }}</td><td>{{ e.model }}</td>
<td class="num">{% if e.links.results %}<a href="{{ e.links.results }}">{{ e.score_text }}</a>{% else %}{{ e.score_text }}{% endif %}</td>
<td class="num">{{ e.errors }}</td><td class="num">{{ e.cost_text }}</td><td>{{ e.cutoff }}</td>
<td>{% for name, link in e.links.items() if link %}<a href="{{ link }}">{{ name }}</a>{{ " " if not loop.last }}{% endfor %}</td></tr>
{% endfor %}
</tbody></table></div>
{% if group.breakdown %}
<h3>By {{ group.breakdown_by }}</h3>
<div class="chart" data-chart="{{ group.anchor }}-breakdown" role="img"
     aria-label="Scores by {{ group.breakdown_by }}"></div>
<div class="table-wrap"><table>
<thead><tr><th>model</th>{% for g in group.breakdown_groups %}<th>{{ g }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in group.breakdown %}
<tr><td>{{ row.model }}</td>{% for cell in row.cells %}<td class="num">{{ cell }}</td>{% endfor %}</tr>
{% endfor %}
</tbody></table></div>
{% endif %}
</section>
{% endfor %}
</main>
<script type="application/json" id="charts">{{ charts_json }}</script>
<script>
(function () {
  var specs = JSON.parse(document.getElementById("charts").textContent);
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var spec = specs[el.getAttribute("data-chart")];
    if (spec) { vegaEmbed(el, spec, {actions: false, renderer: "svg"}); }
  });
})();
</script>
</body>
</html>
""")


def _anchor(method: str, release: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in f"{method}-{release}").strip("-").lower()


def score_chart(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Each model's score as a point with its 95% interval as a rule (fractions shown as percent)."""
    values = [{"model": e["model"], "score": (e["score"] or {}).get("value"),
               "low": ((e["score"] or {}).get("ci95") or [0, 0])[0], "high": ((e["score"] or {}).get("ci95")
                                                                              or [0, 0])[1],
               "n": e["n"]} for e in entries if (e["score"] or {}).get("value") is not None]  # fmt: skip
    y = {"field": "model", "type": "nominal", "sort": None, "title": None}
    return {
        "$schema": VEGA_LITE_SCHEMA, "width": "container", "height": {"step": 28}, "data": {"values": values},
        "layer": [
            {"mark": {"type": "rule", "strokeWidth": 2},
             "encoding": {"y": y, "x": {"field": "low", "type": "quantitative", "title": "score (95% interval)",
                                        "axis": {"format": ".0%"}, "scale": {"domain": [0, 1]}},
                          "x2": {"field": "high"}}},
            {"mark": {"type": "point", "filled": True, "size": 70},
             "encoding": {"y": y, "x": {"field": "score", "type": "quantitative"},
                          "tooltip": [{"field": "model"}, {"field": "score", "format": ".1%"},
                                      {"field": "low", "format": ".1%"}, {"field": "high", "format": ".1%"},
                                      {"field": "n"}]}},
        ],
    }  # fmt: skip


def breakdown_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A heat map of each model's score per group (category or tier)."""
    return {
        "$schema": VEGA_LITE_SCHEMA, "width": "container", "height": {"step": 28}, "data": {"values": rows},
        "mark": "rect",
        "encoding": {"x": {"field": "group", "type": "nominal", "title": None, "axis": {"labelAngle": -30}},
                     "y": {"field": "model", "type": "nominal", "title": None},
                     "color": {"field": "score", "type": "quantitative", "scale": {"domain": [0, 1]},
                               "legend": {"format": ".0%"}},
                     "tooltip": [{"field": "model"}, {"field": "group"}, {"field": "score", "format": ".1%"},
                                 {"field": "n"}]},
    }  # fmt: skip


def _cost_text(cost: float | None) -> str:
    if cost is None:
        return "unpriced"
    return "$0" if cost == 0 else f"${cost:.4f}"


def page_groups(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The page's sections (one per method and release) and the chart specs by name."""
    by_group: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for e in entries:
        by_group[(e["method"], e["release"])].append(e)
    groups, charts = [], {}
    for (method, release), mine in by_group.items():
        anchor = _anchor(method, release)
        shown = [{**e, "rank_text": "–".join(str(r) for r in sorted(set(e["rank"]))),
                  "cost_text": _cost_text(e["cost_per_item"])} for e in mine]  # fmt: skip
        charts[f"{anchor}-scores"] = score_chart(mine)
        group: dict[str, Any] = {"anchor": anchor, "method_name": mine[0]["method_name"], "release": release,
                                 "entries": shown, "breakdown": None}  # fmt: skip
        names = sorted({g for e in mine for g in ((e["breakdown"] or {}).get("groups") or {})})
        if names:
            rows, cells = [], []
            for e in mine:
                found = (e["breakdown"] or {}).get("groups") or {}
                line = []
                for g in names:
                    est = Estimate.from_dict(found.get(g))
                    line.append(est.percent(0) if est else "–")
                    if est and est.value is not None:
                        cells.append({"model": e["model"], "group": g, "score": est.value, "n": est.n})
                rows.append({"model": e["model"], "cells": line})
            group.update(breakdown=rows, breakdown_groups=names,
                         breakdown_by=(mine[0]["breakdown"] or {}).get("by") or "group")
            charts[f"{anchor}-breakdown"] = breakdown_chart(cells)
        groups.append(group)
    return groups, charts


def render_page(title: str, entries: list[dict[str, Any]]) -> str:
    groups, charts = page_groups(entries)
    charts_json = json.dumps(charts, ensure_ascii=False).replace("<", "\\u003c")
    return _PAGE.render(title=title, groups=groups, charts_json=jinja2.utils.markupsafe.Markup(charts_json))


__all__ = ["breakdown_chart", "page_groups", "render_page", "score_chart"]

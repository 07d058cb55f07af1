"""Every HTML walk stays linear on deep nesting, native and twin alike, with identical output.

A page of N nested ``<table><tr><td>`` used to cost O(N^2) (readability's paragraph scores
walked each cell's whole subtree: 5,000 levels took 11 s). Each shape below is rendered at a
depth that takes well under a second when the walks are linear and many seconds when one is
quadratic; the budget is per byte and generous (the machine is shared), so it only catches an
order of magnitude. The native and pure-Python engines must give the same Markdown and text
(the twin runs in a subprocess with ``CCRAWL_NO_EXTENSIONS=1``, so every twin is used).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import tree
from ccrawl.extract.engines import get_extractor
from ccrawl.extract.readability import _TAG_WEIGHT, _class_weight

#: Seconds allowed per byte of input (plus a floor): a linear walk needs ~1 us/byte here.
BUDGET_PER_BYTE = 20e-6
BUDGET_FLOOR = 1.5

SHAPES: dict[str, tuple[str, str, int]] = {
    "tables": ("<table><tr><td>cell {i}, text", "</td></tr></table>", 3000),
    "tables-in-divs": ("<table><tr><td><div>cell {i}, text", "</div></td></tr></table>", 3000),
    "divs-in-tables": ("<div class=content><table><tr><td>cell {i}, text", "</td></tr></table></div>", 3000),
    "lists": ("<ul><li>item {i} with some words", "</li></ul>", 2000),
    # a list straight inside a list (no <li> between): the walk takes it as the item before's sub-list
    "lists-in-lists": ("<ul><li>item {i} with some words</li>", "</ul>", 3000),
    "ordered-lists": ("<ol><li><p>item {i} with some words, more", "</p></li></ol>", 2000),
    "quotes": ("<blockquote><p>quoted {i} with some words, more", "</p></blockquote>", 2000),
    "formatting": ("<b><i><em>bold {i} ", "</em></i></b>", 3000),
    "anchors": ('<a href="/p{i}">link {i} ', "</a>", 3000),
    "svg": ("<svg><g><text>shape {i}</text>", "</g></svg>", 3000),
    "select": ("<select><option>opt {i}", "</option></select>", 3000),
    "main-candidates": ("<table><tr><td role=main>cell {i}, text", "</td></tr></table>", 5000),
    "article-candidates": ('<div itemprop="text"><a href="/{i}">link {i}</a> text {i}, more', "</div>", 3000),
    "pre-in-cells": ("<table><tr><td><pre>code {i}, and more code here", "</pre></td></tr></table>", 3000),
}


def nested_page(open_: str, close: str, depth: int) -> str:
    return "<html><body>" + "".join(open_.format(i=i) for i in range(depth)) + "end" + close * depth + "</body></html>"


def _extract(html: str) -> tuple[str, str]:
    x = get_extractor("h2m").extract(html, "https://example.com/")
    return x.markdown, x.text


def _budget(html: str) -> float:
    return max(BUDGET_FLOOR, BUDGET_PER_BYTE * len(html.encode()))


def _twin_outputs(pages: dict[str, str]) -> dict[str, list[str]]:
    """The pure-Python engines' Markdown and text for each page, in a fresh process."""
    code = (
        "import json, sys\n"
        "from ccrawl.extract.engines import get_extractor\n"
        "pages = json.load(sys.stdin)\n"
        "ex = get_extractor('h2m')\n"
        "out = {}\n"
        "for k, h in pages.items():\n"
        "    x = ex.extract(h, 'https://example.com/')\n"
        "    out[k] = [x.markdown, x.text]\n"
        "json.dump(out, sys.stdout)\n"
    )
    env = dict(os.environ, CCRAWL_NO_EXTENSIONS="1")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(pages),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_deep_shape_renders_within_a_linear_budget(shape: str) -> None:
    open_, close, depth = SHAPES[shape]
    html = nested_page(open_, close, depth)
    started = time.perf_counter()
    _, text = _extract(html)
    took = time.perf_counter() - started
    assert took < _budget(html), f"{shape} at depth {depth}: {took:.2f}s for {len(html)} bytes"
    if shape not in ("svg", "select"):  # svg is stripped, a select's options are not content
        assert "end" in text  # the innermost text survives (flattened, not dropped)


def test_native_and_twin_agree_at_depth() -> None:
    pages = {shape: nested_page(o, c, d // 4) for shape, (o, c, d) in SHAPES.items()}
    twin = _twin_outputs(pages)
    for shape, html in pages.items():
        assert list(_extract(html)) == twin[shape], f"{shape}: native and twin differ"


def test_readability_scores_of_nested_cells_equal_the_per_node_answer() -> None:
    # The linear walk must give what the per-node selectolax questions give, at depth.
    html = nested_page("<table class=post><tr><td> cell {i}, with commas, and text ", " </td></tr></table>", 300)
    body = LexborHTMLParser(html).body
    final, best = tree.readable_scores_py(body, _TAG_WEIGHT, _class_weight)
    want: dict[int, float] = {}
    for para in body.css("td"):
        text = para.text(deep=True)
        amount = 1 + text.count(",") + min(len(text) // 100, 3)
        for node, share in ((para.parent, 1.0), (para.parent.parent, 0.5)):
            key = node.mem_id
            if key not in want:
                want[key] = _TAG_WEIGHT.get(node.tag, 0) + _class_weight(
                    node.attributes.get("class"), node.attributes.get("id")
                )
            want[key] += amount * share
    nodes = {n.mem_id: n for n in body.traverse()}
    for key in want:
        chars = len(nodes[key].text(deep=True))
        want[key] *= 1 - min(tree.link_text_length_py(nodes[key]) / chars, 1.0)
    assert final == pytest.approx(want)
    assert best is not None and final[best.mem_id] == max(final.values())
    if tree.readable_scores is not tree.readable_scores_py:
        native_final, native_best = tree.readable_scores(body, _TAG_WEIGHT, _class_weight)
        assert native_final == final and native_best is not None and native_best.mem_id == best.mem_id


def test_whitespace_and_commas_count_as_str_strip_and_count_do() -> None:
    # Leading/trailing Unicode whitespace spread over several text nodes and children.
    html = (
        "<body><div><p>\u3000 \n<b> \u00a0</b>" + "x" * 10 + "<i>\uff0c,</i>" + "y" * 13 + "<span>\u2003 </span></p>"
        "<p>  <b>  </b>  short  <i> </i></p><p>\u2028" + "z," * 20 + "</p></div></body>"
    )
    body = LexborHTMLParser(html).body
    final, _ = tree.readable_scores_py(body, _TAG_WEIGHT, _class_weight)
    div = body.css_first("div")
    assert div is not None
    # The first p holds exactly 25 characters between its outer whitespace (it scores), the
    # second is short, the third scores.
    texts = [p.text(deep=True) for p in body.css("p")]
    scoring = [t for t in texts if len(t.strip()) >= 25]
    assert len(scoring) == 2
    amount = sum(1 + t.count(",") + t.count("\uff0c") + min(len(t) // 100, 3) for t in scoring)
    assert final[div.mem_id] == pytest.approx(_TAG_WEIGHT["div"] + amount)
    if tree.readable_scores is not tree.readable_scores_py:
        assert tree.readable_scores(body, _TAG_WEIGHT, _class_weight)[0] == final


_TAGS = [
    "table",
    "tr",
    "td",
    "div",
    "ul",
    "li",
    "blockquote",
    "p",
    "b",
    "a href=/x",
    "svg",
    "select",
    "option",
    "pre",
    "span",
    "dl",
    "dd",
]


@st.composite
def tag_soups(draw: Any) -> str:
    """Long runs of opening tags (what builds depth) with some closers, text and commas."""
    units = draw(st.lists(st.sampled_from(_TAGS), min_size=1, max_size=6))
    repeat = draw(st.integers(min_value=200, max_value=1200))
    closers = draw(st.booleans())
    piece = "".join(f"<{t}>w, " for t in units)
    tail = "".join(f"</{t.split()[0]}>" for t in reversed(units)) if closers else ""
    return "<html><body>" + (piece * repeat) + "x" + tail * repeat


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tag_soups())
def test_tag_soup_renders_within_a_budget_per_byte(html: str) -> None:
    started = time.perf_counter()
    _extract(html)
    took = time.perf_counter() - started
    assert took < _budget(html), f"{took:.2f}s for {len(html)} bytes: {html[:120]!r}"

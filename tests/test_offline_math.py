"""Feedback and statistics pages read right offline (issue 41): TeX as MathML, tables as tables, checked in a
real browser where one is installed, and a student's TeX never becomes live markup."""
from __future__ import annotations

import re

import nbformat
import pytest
from browser import BROWSER, measure

from autograder.manifest import REPO_ROOT
from autograder.reports.offline_math import with_mathml


def test_formulas_become_mathml_outside_code_only():
    page = ("<p>loss $-A_i \\log\\pi$ and $$e^{\\delta} - \\delta - 1$$ and \\(x^2\\)</p>"
            "<pre>$a$ stays</pre><code>$b$</code><p>costs $5</p>")
    out = with_mathml(page)
    assert out.count("<math") == 3 and 'display="block"' in out
    assert "<pre>$a$ stays</pre>" in out and "<code>$b$</code>" in out and "costs $5" in out


def test_a_students_tex_never_becomes_markup():
    hostile = ("<p>$\\text{&lt;img src=x onerror=alert(1)&gt;}$ $\\href{javascript:alert(1)}{x}$ "
               "$\\style{background:url(http://x)}{y}$</p>")
    out = with_mathml(hostile)
    assert out.count("<math") == 3
    assert "<img" not in out and "javascript:" not in out and "style=" not in out and "href=" not in out


def test_tex_it_cannot_read_stays_as_written():
    assert with_mathml("<p>$\\frac{1}{$</p>") == "<p>$\\frac{1}{$</p>"


def _feedback_like_page(tmp_path):
    """The maxent_irl release as nbconvert renders a notebook for nbgrader's feedback, then our pass."""
    from nbconvert import HTMLExporter

    notebook = nbformat.read(REPO_ROOT / "notebooks" / "maxent_irl" / "maxent_irl.ipynb", as_version=4)
    body, _ = HTMLExporter().from_notebook_node(notebook)
    page = tmp_path / "maxent_irl.html"
    page.write_text(with_mathml(body), encoding="utf-8")
    return page


@pytest.mark.skipif(BROWSER is None, reason="no Chromium here (apt install chromium to run the browser checks)")
def test_a_feedback_page_draws_its_math_and_tables_offline(tmp_path):
    seen = measure(_feedback_like_page(tmp_path))
    assert len(seen["maths"]) > 20 and all(m["mathml"] and m["height"] > 0 for m in seen["maths"]), seen["maths"][:3]
    assert seen["tex"] == [], seen["tex"]  # no formula left as source
    points = seen["tables"][0]  # the title's points table: a real table, one row per part plus header and total
    assert points["rows"] >= 7 and points["height"] > 50


@pytest.mark.skipif(BROWSER is None, reason="no Chromium here (apt install chromium to run the browser checks)")
def test_the_statistics_page_opens_offline(tmp_path):
    from test_stats import write_results

    from autograder.__main__ import main

    out = tmp_path / "OUT"
    write_results(out)
    (out / "gradebook.db").write_bytes(b"")
    assert main(["stats", str(out)]) == 0
    seen = measure(out / "stats" / "toy" / "index.html")
    assert seen["errors"] == [] and seen["tables"] and all(t["rows"] > 1 for t in seen["tables"])
    page = (out / "stats" / "toy" / "index.html").read_text()
    assert not re.search(r"""(?:src|href)=["']?https?://""", page) and "<svg" in page  # plots inline, nothing fetched

"""Markdown as formgrader shows it: rendered by nbconvert, then cleaned by bleach.

nbgrader's formgrade template renders every markdown cell with ``cell.source | markdown2html``
and never cleans the result, and nbconvert's renderer keeps "harmful" link targets: a written
answer ``[my derivation](javascript:...)`` became a live ``javascript:`` link on formgrader's
origin, one click from the grader's session (nbconvert's ``SanitizeHTML`` cleans the *source*,
where that link is not HTML yet). :func:`markdown2html` replaces the template's filter
(``HTMLExporter.filters``, see ``autograder.reports.formgrader.HARDENING``): nbconvert's own
rendering, then ``bleach.clean`` with the tags rendered markdown needs and only ``http``,
``https`` and ``mailto`` links; anything else is escaped, shown as text.
"""
from __future__ import annotations

import bleach
from nbconvert.filters.markdown_mistune import markdown2html_mistune

TAGS = frozenset(bleach.ALLOWED_TAGS) | {
    "p", "div", "span", "br", "hr", "pre", "code", "h1", "h2", "h3", "h4", "h5", "h6", "img", "del", "sup", "sub",
    "table", "thead", "tbody", "tr", "th", "td", "dl", "dt", "dd"}
ATTRIBUTES = {**bleach.ALLOWED_ATTRIBUTES, "*": ["class", "id"], "a": ["href", "title"],
              "img": ["src", "alt", "title"], "th": ["align"], "td": ["align"]}
PROTOCOLS = frozenset({"http", "https", "mailto"})


def markdown2html(source: str) -> str:
    """HTML of ``source`` (markdown, math left for MathJax) with no script, event handler or
    link to a protocol other than http, https and mailto (relative links stay)."""
    return bleach.clean(markdown2html_mistune(source), tags=TAGS, attributes=ATTRIBUTES, protocols=PROTOCOLS)

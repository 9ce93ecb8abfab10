"""Markdown as formgrader shows it: rendered by nbconvert, then cleaned by bleach.

nbgrader's formgrade template renders every markdown cell with ``cell.source | markdown2html``
and never cleans the result, and nbconvert's renderer keeps "harmful" link targets: a written
answer ``[my derivation](javascript:...)`` became a live ``javascript:`` link on formgrader's
origin, one click from the grader's session (nbconvert's ``SanitizeHTML`` cleans the *source*,
where that link is not HTML yet). :func:`markdown2html` replaces the template's filter
(``HTMLExporter.filters``, see ``autograder.reports.formgrader.HARDENING``): nbconvert's own
rendering, with the cell's attachments (a student's pasted figure), then ``bleach.clean`` with
the tags rendered markdown needs, ``http``/``https``/``mailto`` links, and ``data:`` only for an
image's PNG, JPEG or GIF; anything else is escaped, shown as text. An image whose attachment is
missing shows its alt text instead of failing the whole page.
"""
from __future__ import annotations

import bleach
from jinja2 import pass_context
from nbconvert.filters.markdown_mistune import InvalidNotebook, IPythonRenderer, MarkdownWithMath

TAGS = frozenset(bleach.ALLOWED_TAGS) | {
    "p", "div", "span", "br", "hr", "pre", "code", "h1", "h2", "h3", "h4", "h5", "h6", "img", "del", "sup", "sub",
    "table", "thead", "tbody", "tr", "th", "td", "dl", "dt", "dd"}
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})  # data: for images only (see _allowed)
IMAGE_DATA = ("data:image/png;base64,", "data:image/jpeg;base64,", "data:image/gif;base64,")
NAMED = {"a": ("href", "title"), "img": ("src", "alt", "title"), "th": ("align",), "td": ("align",)}


def _allowed(tag: str, name: str, value: str) -> bool:
    """bleach's attribute check: class and id anywhere, a few per tag; data: URLs for images only."""
    if name in ("class", "id") or (tag in ("abbr", "acronym") and name == "title"):
        return True
    if name not in NAMED.get(tag, ()):
        return False
    if value.strip().lower().startswith("data:"):
        return tag == "img" and name == "src" and value.strip().lower().startswith(IMAGE_DATA)
    return True


def clean(html: str) -> str:
    return bleach.clean(html, tags=TAGS, attributes=_allowed, protocols=PROTOCOLS)


def render(source: str, attachments: dict | None = None) -> str:
    """nbconvert's HTML for ``source``; an image whose attachment is missing keeps its alt text."""
    def once(text: str) -> str:
        return MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=attachments or {})).render(text)

    try:
        return once(source)
    except InvalidNotebook:  # "missing attachment: fig.png" would fail formgrader's whole page
        return once(source.replace("attachment:", "missing-attachment:"))


@pass_context
def markdown2html(context, source: str) -> str:
    """HTML of a markdown cell (math left for MathJax) with no script, event handler, or link to a
    protocol other than http, https and mailto (relative links stay)."""
    cell = context.get("cell") or {}
    attachments = cell.get("attachments") if isinstance(cell, dict) else None
    return clean(render(source, attachments if isinstance(attachments, dict) else None))

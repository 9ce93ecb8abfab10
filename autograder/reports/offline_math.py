"""TeX in a page as MathML, so formulas read right without MathJax from a CDN.

nbgrader's feedback pages load MathJax from cdnjs: offline (an air-gapped grading box, a student
reading a returned page on a train) every ``$\\hat A_i$`` stays TeX source. :func:`with_mathml`
converts each ``$...$``, ``$$...$$``, ``\\(...\\)`` and ``\\[...\\]`` in a page's text (never in
``pre``, ``code``, ``script``, ``style`` or ``textarea``) with latex2mathml; every browser of the
last years draws MathML itself. The MathML is then cleaned by bleach down to presentation tags and
layout attributes: latex2mathml copies ``\\href`` targets and ``\\style`` into its output and
``\\text{...}`` verbatim, and students write this TeX. A formula it cannot convert stays as it was
(MathJax still renders it where it loads).
"""
from __future__ import annotations

import html
import re

import bleach

MATHML_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac", "msqrt",
    "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
    "menclose", "semantics", "annotation"})
MATHML_ATTRIBUTES = {tag: ["display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
                           "accent", "accentunder", "columnalign", "rowspacing", "columnspacing", "width", "height",
                           "depth", "linethickness", "displaystyle", "scriptlevel", "minsize", "maxsize",
                           "movablelimits", "notation", "symmetric", "largeop", "form"] for tag in MATHML_TAGS}
SKIPPED = ("pre", "code", "script", "style", "textarea", "math")
TOKENS = re.compile(r"(<[^>]*>)")
FORMULA = re.compile(r"\$\$(?P<block>.+?)\$\$|\\\[(?P<block2>.+?)\\\]|\\\((?P<inline2>.+?)\\\)"
                     r"|\$(?P<inline>(?:[^$\n]|\n(?!\n))+?)\$", re.S)  # inline math may wrap, not span a paragraph


def mathml(tex: str, display: str) -> str | None:
    """One formula (HTML-escaped TeX, as a page holds it) as clean MathML; None when it cannot be converted."""
    from latex2mathml.converter import convert

    try:
        converted = convert(html.unescape(tex).strip(), display=display)
    except Exception:  # noqa: BLE001 - any TeX latex2mathml cannot read stays as it was
        return None
    return bleach.clean(converted, tags=MATHML_TAGS, attributes=MATHML_ATTRIBUTES, strip=True)


def _formulas(text: str) -> str:
    def replace(found: re.Match) -> str:
        block = found.group("block") or found.group("block2")
        tex = block if block is not None else (found.group("inline") or found.group("inline2"))
        return mathml(tex, "block" if block is not None else "inline") or found.group(0)

    return FORMULA.sub(replace, text)


def with_mathml(page: str) -> str:
    """``page`` with the TeX of its text as MathML (see the module's docstring)."""
    parts, inside = TOKENS.split(page), {tag: 0 for tag in SKIPPED}
    for index, part in enumerate(parts):
        if part.startswith("<"):
            name = re.match(r"</?\s*([a-zA-Z0-9]+)", part)
            tag = name.group(1).lower() if name else ""
            if tag in inside and not part.endswith("/>"):
                inside[tag] = max(0, inside[tag] + (-1 if part.startswith("</") else 1))
        elif part and not any(inside.values()) and ("$" in part or "\\" in part):
            parts[index] = _formulas(part)
    return "".join(parts)

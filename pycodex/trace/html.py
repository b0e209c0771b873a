"""``pycodex trace html``: one self-contained page (see :mod:`pycodex.trace.page`)."""

from __future__ import annotations

import html
import json

from pycodex.json_types import JsonObj
from pycodex.trace.page import PAGE

__all__ = ["render_page"]


def render_page(timeline: JsonObj, title: str) -> str:
    # "<" escaped so no string in the trace can close the data <script> element.
    """The HTML page of ``timeline``, titled ``title``, with the timeline embedded as JSON."""
    data = json.dumps(timeline, ensure_ascii=False).replace("<", "\\u003c")
    # The data goes in first; the title's two places come before it in the page, whatever the data holds.
    return PAGE.replace("__DATA__", data, 1).replace("__TITLE__", html.escape(title), 2)

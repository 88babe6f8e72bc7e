"""Text from files, made inert for Markdown (CommonMark with GitHub's and GitLab's
extensions).

A summary is posted where Markdown is rendered, and what it shows comes from files anyone
with write access can change: a hypothesis like ``![x](https://evil/t.png)`` or
``<img src=x onerror=…>`` must read as those characters, never become an image, a link or
HTML. So:

* line breaks and runs of whitespace become one space (a line break would end a table row);
* every ASCII punctuation character Markdown gives meaning to mid-line is backslash-escaped
  (CommonMark shows an escaped character as itself), and the pipe too (a table cell);
* a dot before a letter (``www.x.y``, ``x.com``; not ``-3.3``) is escaped, and so is ``:``
  (above), so neither a bare domain nor ``https://…`` can become an automatic link;
* ``@`` and ``#`` are followed by a WORD JOINER (U+2060, invisible): GitHub and GitLab turn
  ``@name`` and ``#12`` into links (and notify people) after Markdown is rendered, where a
  backslash escape no longer exists.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&:$^{}])")
_DOTTED = re.compile(r"(?<=[0-9A-Za-z])\.(?=[A-Za-z])")
_REFERENCE = re.compile(r"([@#])")
WORD_JOINER = "\u2060"


def markdown_text(value) -> str:
    """``value`` as Markdown that renders as exactly its characters (whitespace folded)."""
    text = " ".join(str(value).split())
    text = _SPECIAL.sub(r"\\\1", text)
    text = _DOTTED.sub(r"\\.", text)
    return _REFERENCE.sub(lambda match: "\\" + match.group(1) + WORD_JOINER, text)

"""What TinyXML2 (the parser under urdfdom, libsdformat and MuJoCo) accepts after a document's root element.

XML allows one root element; TinyXML2 reads a document as a list of nodes, so it loads a robot
description followed by more markup, and urdfdom and libsdformat then read the first ``<robot>`` or
``<sdf>``. Measured with ``check_urdf`` (urdfdom 6) and ``conformance/sdf_ref`` (libsdformat 12.3), which
agree on every case:

* loaded: further elements (well formed, with any text, entity or CDATA inside), comments, CDATA
  sections and ``<!...>`` declarations between them; an end tag with no open element ends the document,
  and whatever follows it, text included, is ignored;
* refused: text outside an element, an unclosed or mismatched element, a ``<?...?>`` instruction, an
  unterminated comment, CDATA section or tag.

:func:`tail_loads` answers that question for the bytes after the root element (the caller has parsed
the root itself); it scans each byte at most a few times, with regular expressions and ``bytes.find``, so its
time is bounded by the document's size.
"""

from __future__ import annotations

import re

__all__ = ["tail_loads"]

_NAME = re.compile(rb"[^\s/>]+")
_SPACE = b" \t\r\n"
_TAG_STOP = re.compile(rb"[\"'>]")
_NOT_SPACE = re.compile(rb"[^ \t\r\n]")


def _tag_end(tail: bytes, pos: int) -> int:
    """The index just after the ``>`` closing the tag that starts at ``pos`` (quoted ``>`` skipped), or -1."""
    while (m := _TAG_STOP.search(tail, pos)) is not None:
        if m.group(0) == b">":
            return m.end()
        close = tail.find(m.group(0), m.end())  # a quoted value: its closing quote
        if close < 0:
            return -1
        pos = close + 1
    return -1


def tail_loads(tail: bytes) -> bool:
    """Whether TinyXML2 loads a document whose root element is followed by ``tail``."""
    stack: list[bytes] = []
    i, n = 0, len(tail)
    while i < n:
        if tail[i] in _SPACE:
            m = _NOT_SPACE.search(tail, i)
            i = n if m is None else m.start()
            continue
        if tail[i] != ord("<"):  # text: inside a trailing element it is kept, outside it is an error
            if not stack:
                return False
            nxt = tail.find(b"<", i)
            i = n if nxt < 0 else nxt
            continue
        if tail.startswith(b"<!--", i):
            end = tail.find(b"-->", i + 4)
            if end < 0:
                return False
            i = end + 3
        elif tail.startswith(b"<![CDATA[", i):
            end = tail.find(b"]]>", i + 9)
            if end < 0:
                return False
            i = end + 3
        elif tail.startswith(b"<?", i):  # a declaration after the first element
            return False
        elif tail.startswith(b"<!", i):
            end = tail.find(b">", i)
            if end < 0:
                return False
            i = end + 1
        elif tail.startswith(b"</", i):
            m = _NAME.match(tail, i + 2)
            end = tail.find(b">", i)
            if m is None or end < 0:
                return False
            if not stack:  # an end tag closing nothing: the document ends here
                return True
            if stack.pop() != m.group(0):
                return False
            i = end + 1
        else:
            m = _NAME.match(tail, i + 1)
            end = _tag_end(tail, i + 1)
            if m is None or end < 0:
                return False
            if tail[end - 2] != ord("/"):
                stack.append(m.group(0))
            i = end
    return not stack

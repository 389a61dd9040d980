"""Precompiled world_state text: the fixed pieces of one snapshot layout, numbers filled in per call.

A :class:`SnapshotTemplate` holds the text between the number groups of one document layout (tags,
names, indentation) and which values go into each group.  That text is not written here: it is cut
out of the USDF writer's own document (:func:`derive_template`: the writer writes a state of the
layout holding :func:`sentinels` for its numbers, and the text between them is kept), so the one
writer decides tags, escaping and layout.  ``render`` gathers the values in document order and
formats them all in one call:

* with ``orjson`` (the ``record`` extra; no apt package) the gathered array is written by its shortest round-trip
  float formatter (Ryu-style, the same digits as Python's ``repr``).  ``orjson`` writes some
  magnitudes differently (``1e-9`` where ``repr`` writes ``1e-09``, ``0.00001`` for ``1e-05``,
  ``1e16`` for ``1e+16``): exactly those with ``1e-9 <= |x| < 1e-4`` or ``|x| >= 1e16`` (checked on
  millions of values across the whole double range); the groups holding one are written again with
  ``repr``.  Rounding noise such as ``1.2e-16`` (two-digit exponents) is spelled alike;
* without it, every value goes through ``float.__repr__``.

Either way the text equals :func:`robot_state_format.usdf.writer.write_world_state` of the same
state, byte for byte (the writer stays the reference; the tests compare the two on random states).
"""

from __future__ import annotations

import importlib
import itertools
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import Diagnostic, UsdfError


def _fast_formatter() -> ModuleType | None:
    """``orjson`` (requirements/record.txt), a fast shortest-float formatter; None: the repr path below."""
    try:
        return importlib.import_module("orjson")
    except ImportError:  # pragma: no cover - orjson is optional (requirements/record.txt)
        return None


orjson = _fast_formatter()
_OPTION = orjson.OPT_SERIALIZE_NUMPY if orjson is not None else 0


def formatter_note() -> str | None:
    """The one line a node logs when snapshots go through the slow formatter (None: orjson is there)."""
    if orjson is not None:
        return None
    return ("world_state snapshots: orjson is not installed, so their numbers are written through Python's repr "
            "(the same text, about 0.4 us per number instead of 0.02: ~0.5 ms per snapshot of an 80-link robot); "
            "`pip install orjson` (no apt package) makes them fast")

__all__ = ["SnapshotTemplate", "check_finite", "derive_template", "formatter_note", "sentinels"]

FloatArray = NDArray[np.float64]
_SEP = " null "  # a NaN sentinel between two groups: orjson writes it ``null``, then ``,`` -> `` ``
CHUNK_VALUES = 2048  # gathered values formatted per orjson call (see SnapshotTemplate.chunks)
_frepr = float.__repr__


def sentinels(n: int, avoid: str = "") -> FloatArray:
    """``n`` distinct finite numbers standing for the values of a layout while its text is derived:
    ``i + 0.5`` for value ``i`` (exact, short, fast to write).  In a snapshot document every element
    text holding numbers holds only the layout's values, so a text made of these is a number group.

    ``avoid``: an element text of the document that is not numbers (a name, e.g. a model_state's
    ``<parent>``, as escaped); when each of its words would read as one of these sentinels they are
    ``i + 0.25`` instead (no word reads as both ``k + 0.5`` and ``k + 0.25``)."""
    if n >= 1 << 52:
        raise ValueError("too many values for one snapshot layout")
    offset = 0.25 if avoid and all(_is_sentinel(w, n, 0.5) for w in avoid.split(" ")) else 0.5
    return np.arange(n, dtype=np.float64) + offset


def _is_sentinel(word: str, n: int, offset: float) -> bool:
    """Whether ``word`` is the text of ``i + offset`` for some ``0 <= i < n``."""
    try:
        x = float(word)
    except ValueError:
        return False
    i = x - offset
    return _frepr(x) == word and i.is_integer() and 0 <= i < n


def derive_template(document: str, values: FloatArray, stamp_text: str = "") -> SnapshotTemplate:
    """The template of the layout the writer wrote as ``document``.

    ``document`` is :func:`robot_state_format.usdf.writer.write_world_state` of a state holding
    ``values`` (:func:`sentinels`, one per value of the layout), each vector element's numbers
    consecutive values; ``stamp_text`` is the stamp element that document holds (empty: none).
    Every element text made of sentinels becomes a number group; everything else (tags, names,
    escaping, indentation) is kept as the writer wrote it, so the template renders the writer's
    bytes (values the document leaves out, unknown or unmeasured, are never gathered).  ``ValueError``
    when a value appears twice or a group is not a run of consecutive values.
    """
    nvalues = len(values)
    index = {_frepr(v): i for i, v in enumerate(values.tolist())}
    stamp_at = -1
    if stamp_text:
        stamp_at = document.find(stamp_text)
        if stamp_at < 0:
            raise ValueError("the stamp element is not in the document")
        document = document[:stamp_at] + document[stamp_at + len(stamp_text):]
    pieces: list[str] = []
    groups: list[tuple[int, int]] = []
    start = pos = 0  # the current piece starts at ``start``; element texts are looked at from ``pos``
    while True:
        gt = document.find(">", pos)
        lt = document.find("<", gt + 1) if gt >= 0 else -1
        if lt < 0:
            break
        pos = lt
        if lt == gt + 1 or document[gt + 1] in " \t\n\r":  # no text, or white space between elements
            continue
        at = [index.get(w, -1) for w in document[gt + 1:lt].split(" ")]
        if -1 in at:  # text that is not a number group
            continue
        first = at[0]
        if at != list(range(first, first + len(at))):
            raise ValueError("a number group is not a run of consecutive values")
        pieces.append(document[start:gt + 1])
        groups.append((first, len(at)))
        start = lt
    pieces.append(document[start:])
    covered = sorted(groups)
    if any(s0 + c0 > s1 for (s0, c0), (s1, _) in itertools.pairwise(covered)):
        raise ValueError("the document holds a value of the layout twice")
    if stamp_at > len(pieces[0]):
        raise ValueError("the stamp comes before every number")
    return SnapshotTemplate(pieces, groups, nvalues, stamp_at)


class SnapshotTemplate:
    """The text of one layout; ``render(values, stamp)`` fills in the numbers (see module doc).

    ``stamp_at``: the offset in ``pieces[0]`` where ``render``'s ``stamp_text`` goes (-1: none).
    """

    def __init__(self, pieces: list[str], groups: list[tuple[int, int]], nvalues: int, stamp_at: int = -1) -> None:
        if len(pieces) != len(groups) + 1:
            raise ValueError("pieces must surround the groups")
        at = stamp_at if stamp_at >= 0 else len(pieces[0])
        self.head = (pieces[0][:at], pieces[0][at:])
        self.pieces = pieces
        self.ngroups = len(groups)
        self.nvalues = nvalues
        # gather index with a sentinel (index nvalues: NaN) between groups
        idx: list[int] = []
        starts: list[int] = []
        for k, (s, c) in enumerate(groups):
            if k:
                idx.append(nvalues)
            starts.append(len(idx))
            idx.extend(range(s, s + c))
        self.index = np.asarray(idx, dtype=np.intp)
        self.starts = np.asarray(starts, dtype=np.intp)
        self.counts = np.asarray([c for _, c in groups], dtype=np.intp)
        # group of every gathered position (sentinels: -1)
        owner = np.full(len(idx), -1, dtype=np.intp)
        for k, (s0, c) in enumerate(zip(starts, self.counts.tolist())):
            owner[s0:s0 + c] = k
        self.owner = owner
        # group k's text goes to parts[2k + 1]
        self._parts = [p for piece in pieces for p in (piece, "")][:-1]
        # gathered positions formatted per call, cut between groups: buffers stay small (a large world's
        # single buffer would cost page faults and cache misses on every call: growth stops being linear)
        self.chunks: list[tuple[int, int]] = []
        p0 = 0
        for k in range(1, len(starts) + 1):
            end = starts[k] - 1 if k < len(starts) else len(idx)  # before group k's sentinel
            if k == len(starts) or end - p0 >= CHUNK_VALUES:
                self.chunks.append((p0, end))
                p0 = end + 1

    def render(self, values: FloatArray, stamp_text: str = "") -> str:
        """The document for ``values`` (``(nvalues + 1,)``: the last entry is scratch, set to NaN here).

        ``UsdfError`` USDF_NON_FINITE when one of the values is NaN or infinite (:func:`check_finite`).
        """
        a = np.abs(values[:self.nvalues])
        top = a.max() if self.nvalues else 0.0
        if not top < np.inf:  # NaN fails the comparison too
            check_finite(values[:self.nvalues])
        values[self.nvalues] = np.nan
        g = values[self.index]
        head = self.head[0] + stamp_text + self.head[1]
        if self.ngroups == 0:
            return head
        if orjson is not None:
            if len(self.chunks) == 1:  # "[a,b,null,c]": the brackets come off the first and last group
                groups = orjson.dumps(g, option=_OPTION).decode("ascii").replace(",", " ").split(_SEP)
                groups[0] = groups[0][1:]
                groups[-1] = groups[-1][:-1]
            else:
                groups = []
                for c0, c1 in self.chunks:
                    groups += orjson.dumps(g[c0:c1], option=_OPTION)[1:-1].decode("ascii").replace(",", " ").split(_SEP)
            m = a < 1e-4
            m &= a >= 1e-9
            if top >= 1e16 or m.any():  # rare: look for them group by group
                ga = np.abs(g)
                odd = np.flatnonzero(((ga < 1e-4) & (ga >= 1e-9)) | (ga >= 1e16))
                for k in set(self.owner[odd].tolist()):
                    s0 = int(self.starts[k])
                    groups[k] = " ".join(map(_frepr, g[s0:s0 + int(self.counts[k])].tolist()))
        else:  # pragma: no cover - without orjson
            strs = list(map(_frepr, g.tolist()))
            groups = [" ".join(strs[s0:s0 + c]) for s0, c in zip(self.starts.tolist(), self.counts.tolist())]
        parts = self._parts.copy()
        parts[0] = head
        parts[1::2] = groups
        return "".join(parts)


def check_finite(values: FloatArray) -> None:
    """``UsdfError`` USDF_NON_FINITE when a value is NaN or infinite (checked before the sentinel is set)."""
    if not np.isfinite(values).all():
        raise UsdfError(Diagnostic("USDF_NON_FINITE", "NaN or infinity in the snapshot values", "<output>", None,
                                   "world_state"))

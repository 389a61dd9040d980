"""Write USDF ``<world_state>`` documents: lossless floats, stable element order, fast.

The document is built as a string directly (no lxml objects): floats are written with
``repr`` (the shortest text that reads back bit-identical), NaN and infinities are refused,
names are XML-escaped.  Order: ``stamp``, frames, model_states in list order; inside each
element the canonical child order of docs/usdf-spec.md.

A state the reader would refuse is refused here (``UsdfError``), so that a restart file always
reads back: bad names, non-finite numbers, duplicate names in one scope (frames and top-level
model_states; link_states, joint_states and nested model_states of one model_state), unknown
parents and parent cycles (``robot_state_format.usdf.resolve.parent_diagnostics``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.usdf.atomic import atomic_write
from robot_state_format.usdf.extension import check_extension
from robot_state_format.usdf.resolve import parent_diagnostics
from robot_state_format.usdf.types import (
    FrameState,
    JointState,
    LinkState,
    ModelState,
    WorldState,
)

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'

_SPECIAL_RE = re.compile(r'[&<>"\t\n\r]')
_INVALID_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;", "\n": "&#10;",
            "\r": "&#13;"}
_name_cache: dict[str, str] = {}
_frepr = float.__repr__


def _fail(code: str, msg: str, where: str | None) -> UsdfError:
    if where is not None and _SURROGATE_RE.search(where):  # printable: the lone surrogate as \udcff
        where = where.encode("utf-8", "backslashreplace").decode("utf-8")
    return UsdfError(Diagnostic(code, msg, "<output>", None, where))


def _unencodable(name: str) -> str:
    """Why a name holding lone surrogates cannot be written (they are what Python makes of bytes that
    are not UTF-8 in a command-line argument or file name: U+DCFF from byte 0xFF)."""
    found = _SURROGATE_RE.findall(name)
    escaped = [ord(c) - 0xDC00 for c in found if 0xDC80 <= ord(c) <= 0xDCFF]
    why = (f"from byte(s) that are not UTF-8 ({' '.join(f'0x{b:02X}' for b in escaped[:4])})" if escaped
           else "not a character")
    return (f"name {name!r} holds a lone surrogate ({why}): it is not Unicode text and cannot be written "
            "as UTF-8")


def escape_name(name: str, where: str | None = None) -> str:
    """XML-escaped form of a name, for an attribute value or element text; checks the name."""
    cached = _name_cache.get(name)
    if cached is not None:
        return cached
    if not isinstance(name, str) or not name or name != name.strip(" \t\n\r"):
        raise _fail("USDF_BAD_NAME", f"name {name!r} is empty, not a string, or has surrounding white "
                    "space", where)
    if _INVALID_RE.search(name):
        if _SURROGATE_RE.search(name):
            raise _fail("USDF_BAD_NAME", _unencodable(name), where)
        raise _fail("USDF_BAD_NAME", f"name {name!r} holds characters XML 1.0 cannot carry", where)
    out = _SPECIAL_RE.sub(lambda m: _ESCAPES[m.group(0)], name) if _SPECIAL_RE.search(name) else name
    if len(_name_cache) < 65536:
        _name_cache[name] = out
    return out


def format_floats(values: Sequence[float], where: str | None = None, arity: int | None = None) -> str:
    """Space-separated shortest round-trip text of finite floats (``UsdfError`` otherwise)."""
    try:
        text = " ".join(map(_frepr, values))
    except TypeError:
        try:
            text = " ".join([_frepr(float(v)) for v in values])
        except (TypeError, ValueError):
            raise _fail("USDF_NOT_A_NUMBER", f"values {values!r} are not numbers", where) from None
    if "n" in text:  # 'nan', 'inf' — never part of a finite float's repr
        raise _fail("USDF_NON_FINITE", f"NaN or infinity in {list(values)!r}", where)
    if arity is not None and len(values) != arity:
        raise _fail("USDF_ARITY", f"needs {arity} numbers, got {len(values)}", where)
    return text


def stamp_element(sec: int, nanosec: int, *, pretty: bool = True) -> str:
    """The ``<stamp>`` line of a document (values already checked: integers, ``0 <= nanosec < 1e9``)."""
    if pretty:
        return f'  <stamp sec="{int(sec)}" nanosec="{int(nanosec)}"/>\n'
    return f'<stamp sec="{int(sec)}" nanosec="{int(nanosec)}"/>'


def write_world_state(state: WorldState, *, pretty: bool = True) -> str:
    """The document for ``state`` (with XML declaration)."""
    out: list[str] = [XML_DECLARATION]
    nl = "\n" if pretty else ""
    ind = "  " if pretty else ""
    version = state.version or "1.0"
    if not re.fullmatch(r"1\.[0-9]+", version):
        raise _fail("USDF_VERSION_UNSUPPORTED", f"version {version!r} is not writable (1.x only)", "world_state")
    out.append(f'<world_state name="{escape_name(state.name, "world_state")}" version="{version}">{nl}')
    if state.stamp is not None:
        sec, nanosec = state.stamp
        if not (isinstance(sec, int) and isinstance(nanosec, int) and sec >= 0 and 0 <= nanosec < 10**9):
            raise _fail("USDF_BAD_STAMP", f"stamp {state.stamp!r} needs integers sec >= 0 and "
                        "0 <= nanosec < 1e9", "stamp")
        out.append(stamp_element(sec, nanosec, pretty=pretty))
    for f in state.frames:
        _frame(out, f, ind, nl)
    for m in state.model_states:
        _model(out, m, ind, nl, top=True)
    for e in state.extensions:
        out.append(f"{ind}{check_extension(e)}{nl}")
    _check_structure(state)
    out.append(f"</world_state>{nl}")
    return "".join(out)


def _duplicate(names: list[str]) -> str | None:
    """The first repeated name, if any (a set pass; the loop only runs on a failure)."""
    if len(set(names)) == len(names):
        return None
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None  # pragma: no cover


def _check_structure(state: WorldState) -> None:
    """What the reader (and the XSD) refuse beyond single elements: duplicate top-level names,
    unknown parents and parent cycles (names were checked while writing)."""
    frames, models = state.frames, state.model_states
    if len(frames) + len(models) > 1:
        dup = _duplicate([f.name for f in frames] + [m.name for m in models])
        if dup is not None:
            raise _fail("USDF_DUPLICATE_NAME", f"duplicate frame or model_state name {dup!r} (frames and "
                        "top-level model_states share one namespace)", f"world_state[name={state.name}]")
    if any(f.parent is not None and f.parent != "world" for f in frames) or \
            any(m.parent is not None and m.parent != "world" for m in models):
        diags = parent_diagnostics(state, file="<output>")
        if diags:
            raise UsdfError(diags)


def write_world_state_file(state: WorldState, path: str | os.PathLike[str], *, pretty: bool = True) -> None:
    """Write ``state`` to ``path`` atomically (see :mod:`robot_state_format.usdf.atomic`)."""
    atomic_write(path, write_world_state(state, pretty=pretty).encode("utf-8"))


def _check_name(name: str, tag: str) -> str:
    where = f"{tag}[name={name}]"
    esc = escape_name(name, where)
    if tag in ("frame", "model_state") and ("::" in name or name == "world"):
        raise _fail("USDF_BAD_NAME", f"{tag} name {name!r} must not contain '::' nor be 'world'", where)
    return esc


def _frame(out: list[str], f: FrameState, ind: str, nl: str) -> None:
    name = _check_name(f.name, "frame")
    where = f"frame[name={f.name}]"
    if f.parent is None and f.pose is None and f.twist is None:
        out.append(f'{ind}<frame name="{name}"/>{nl}')
        return
    i2 = ind + ind
    out.append(f'{ind}<frame name="{name}">{nl}')
    if f.parent is not None:
        out.append(f"{i2}<parent>{escape_name(f.parent, where)}</parent>{nl}")
    if f.pose is not None:
        out.append(f"{i2}<pose>{format_floats(f.pose, where, 6)}</pose>{nl}")
    if f.twist is not None:
        out.append(f"{i2}<twist>{format_floats(f.twist, where, 6)}</twist>{nl}")
    out.append(f"{ind}</frame>{nl}")


def _model(out: list[str], m: ModelState, ind: str, nl: str, *, top: bool, depth: int = 1) -> None:
    name = _check_name(m.name, "model_state")
    where = f"model_state[name={m.name}]"
    pad = ind * depth
    inner = pad + ind
    if m.parent is None and m.pose is None and m.twist is None and not m.link_states \
            and not m.joint_states and not m.model_states:
        out.append(f'{pad}<model_state name="{name}"/>{nl}')
        return
    out.append(f'{pad}<model_state name="{name}">{nl}')
    if m.parent is not None:
        if not top:
            raise _fail("USDF_NESTED_PARENT", "a nested model_state has no parent", where)
        out.append(f"{inner}<parent>{escape_name(m.parent, where)}</parent>{nl}")
    if m.pose is not None:
        out.append(f"{inner}<pose>{format_floats(m.pose, where, 6)}</pose>{nl}")
    if m.twist is not None:
        out.append(f"{inner}<twist>{format_floats(m.twist, where, 6)}</twist>{nl}")
    for ls in m.link_states:
        _link(out, ls, inner, ind, nl)
    for js in m.joint_states:
        _joint(out, js, inner, ind, nl)
    for n in m.model_states:
        _model(out, n, ind, nl, top=False, depth=depth + 1)
    for what, items in (("link_state", m.link_states), ("joint_state", m.joint_states),
                        ("model_state", m.model_states)):
        if len(items) > 1:
            dup = _duplicate([it.name for it in items])
            if dup is not None:
                raise _fail("USDF_DUPLICATE_NAME", f"duplicate {what} name {dup!r} in model_state {m.name!r}",
                            f"{what}[name={dup}]")
    out.append(f"{pad}</model_state>{nl}")


def _link(out: list[str], ls: LinkState, pad: str, ind: str, nl: str) -> None:
    where = f"link_state[name={ls.name}]"
    name = escape_name(ls.name, where)
    if ls.pose is None and ls.twist is None and ls.wrench is None:
        out.append(f'{pad}<link_state name="{name}"/>{nl}')
        return
    inner = pad + ind
    out.append(f'{pad}<link_state name="{name}">{nl}')
    if ls.pose is not None:
        out.append(f"{inner}<pose>{format_floats(ls.pose, where, 6)}</pose>{nl}")
    if ls.twist is not None:
        out.append(f"{inner}<twist>{format_floats(ls.twist, where, 6)}</twist>{nl}")
    if ls.wrench is not None:
        out.append(f"{inner}<wrench>{format_floats(ls.wrench, where, 6)}</wrench>{nl}")
    out.append(f"{pad}</link_state>{nl}")


def _joint(out: list[str], js: JointState, pad: str, ind: str, nl: str) -> None:
    where = f"joint_state[name={js.name}]"
    name = escape_name(js.name, where)
    if js.positions is None and js.velocities is None and js.torques is None:
        out.append(f'{pad}<joint_state name="{name}"/>{nl}')
        return
    if js.velocities is not None and js.torques is not None and len(js.velocities) != len(js.torques):
        raise _fail("USDF_DOF_MISMATCH", f"{len(js.velocities)} velocities but {len(js.torques)} torques",
                    where)
    inner = pad + ind
    out.append(f'{pad}<joint_state name="{name}">{nl}')
    if js.positions is not None:
        out.append(f"{inner}<positions>{format_floats(js.positions, where)}</positions>{nl}")
    if js.velocities is not None:
        out.append(f"{inner}<velocities>{format_floats(js.velocities, where)}</velocities>{nl}")
    if js.torques is not None:
        out.append(f"{inner}<torques>{format_floats(js.torques, where)}</torques>{nl}")
    out.append(f"{pad}</joint_state>{nl}")

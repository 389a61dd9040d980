"""Values of SDFormat elements and attributes as libsdformat 12 reads them (``Param::SetFromString``).

Every element of the specification has a type (``double``, ``int``, ``bool``, ``vector3``, ``pose``,
``color``...); libsdformat refuses a file with a value its type's parser refuses, whether or not
anything uses the value. The parsers differ in what they take, and this module follows each (each
case measured with ``conformance/sdf_ref`` against Debian's libsdformat 12.3):

* the text is trimmed of `` \\t\\n\\r`` first; an empty text is the default value, except for a
  *required* value (``required="1"``), which is refused;
* ``double``/``float``: ``std::stod``/``std::stof`` — the longest numeric prefix (``1abc`` is 1,
  ``0x10`` hex is 16, ``inf``/``nan`` are read), refused when there is none or the value is out of
  range (``1e400``, ``1e-400`` and subnormals: ``ERANGE``);
* ``int``: ``std::stoi`` (a prefix, ``1.5`` is 1; beyond 32 bits refused); ``unsigned int``:
  ``std::stoul`` (64 bits, a leading ``-`` taken);
* ``bool``: ``true``/``false``/``1``/``0`` in any case;
* ``vector3``/``vector2d``/``vector2i``: C++ stream extraction of 3 (2) numbers — each a plain decimal
  (no ``inf``/``nan``/hex), a number ending where a non-numeric character starts (``1 2 3abc`` loads),
  values beyond the count ignored, an overflow refused (an underflow is not);
* ``pose``: the white-space separated words, each ``std::stod`` and finite, 6 of them
  (``rotation_format="quat_xyzw"``: 7);
* ``color``: 3 or 4 ``std::stod`` words, none outside [0, 1] (nan passes);
* ``time``: two integers (seconds, nanoseconds) extracted from a stream (``1.5`` and ``1`` are refused);
* ``string``: any text (a required string must not be empty).

``min``/``max`` of the description bound numbers (``horizontal_fov`` of a camera...).
"""

from __future__ import annotations

import math
import re

_TRIM = " \t\n\r"
_STREAM_SPACE = " \t\n\v\f\r"
_DBL_MIN = 2.2250738585072014e-308
_FLT_MAX = 3.4028234663852886e38
_FLT_MIN = 1.1754943508222875e-38
_INT_RANGE = (-(2**31), 2**31 - 1)
_ULONG_MAX = 2**64 - 1

# std::strtod's grammar (C locale): a prefix of the text
_STOD = re.compile(
    r"[+-]?(?:inf(?:inity)?|nan(?:\([0-9a-z_]*\))?"
    r"|0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?[0-9]+")
# what libstdc++'s num_get gathers for a double: sign, digits, one point, an exponent after a digit
_STREAM_MANTISSA = re.compile(r"[+-]?[0-9]*(?:\.[0-9]*)?")
_STREAM_EXPONENT = re.compile(r"[eE][+-]?[0-9]*")
_PLAIN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_COUNTS = {"vector3": 3, "vector2d": 2, "vector2i": 2, "time": 2}  # time: seconds and nanoseconds


class BadValue(ValueError):
    """Why libsdformat refuses a value (the message reads after "VALUE: ")."""


def stod(text: str, single: bool = False) -> float:
    """``std::stod`` (``single``: ``std::stof``) of ``text``: the value of its longest numeric prefix."""
    if text.isascii() and "_" not in text and text[:1] not in " \t\n\r\v\f":
        try:  # the common case: the whole word is a number Python and strtod read alike
            value = float(text)
        except ValueError:
            pass
        else:
            if 0.0 < abs(value) < (_FLT_MAX if single else math.inf) and abs(value) >= (_FLT_MIN if single
                                                                                       else _DBL_MIN):
                return value
    m = _STOD.match(text)
    if m is None:
        raise BadValue("is not a number")
    word = m.group(0)
    body = word.lstrip("+-").lower()
    if body.startswith(("inf", "nan")):
        return float(word.split("(")[0])
    try:
        value = float.fromhex(word) if body.startswith("0x") else float(word)
    except OverflowError:
        raise BadValue("is out of the range of a double") from None
    limit, tiny = (_FLT_MAX, _FLT_MIN) if single else (math.inf, _DBL_MIN)
    mantissa = body.partition("p" if body.startswith("0x") else "e")[0].removeprefix("0x")
    if math.isinf(value) or abs(value) > limit:
        raise BadValue(f"is out of the range of a {'float' if single else 'double'}")
    if (value == 0.0 and any(c not in "0." for c in mantissa)) or 0.0 < abs(value) < tiny:
        raise BadValue(f"underflows a {'float' if single else 'double'} (ERANGE)")
    return value


def _integer(text: str, low: int, high: int) -> int:
    m = _INTEGER.match(text)
    if m is None:
        raise BadValue("is not an integer")
    value = int(m.group(0))
    if not low <= value <= high:
        raise BadValue("is out of range")
    return value


def _stream_numbers(text: str, count: int, integer: bool) -> list[float]:
    """``count`` values extracted from a C++ stream (``ss >> x >> y >> z``)."""
    words = text.split(None, count)[:count]
    if not integer and len(words) == count and all(_PLAIN.fullmatch(w) for w in words):
        plain = [float(w) for w in words]  # the common case: plain decimals
        if all(map(math.isfinite, plain)):
            return plain
    out: list[float] = []
    pos = 0
    for _ in range(count):
        while pos < len(text) and text[pos] in _STREAM_SPACE:
            pos += 1
        if integer:
            m = _INTEGER.match(text, pos)
            if m is None or not _INT_RANGE[0] <= int(m.group(0)) <= _INT_RANGE[1]:
                raise BadValue(f"is not {count} integers")
            out.append(float(m.group(0)))
            pos = m.end()
            continue
        m = _STREAM_MANTISSA.match(text, pos)
        end = m.end() if m is not None else pos
        if any(c.isdigit() for c in text[pos:end]):
            e = _STREAM_EXPONENT.match(text, end)
            if e is not None:
                end = e.end()
        word = text[pos:end]
        try:
            value = float(word)
        except ValueError:
            raise BadValue(f"is not {count} numbers") from None
        if math.isinf(value):
            raise BadValue("is out of the range of a double")
        out.append(value)
        pos = end
    return out


def _words(text: str, what: str) -> list[float]:
    try:
        return [stod(w) for w in text.split()]
    except BadValue as exc:
        raise BadValue(f"is not a {what} ({exc})") from None


def parse(kind: str, text: str, required: bool, rotation_format: str | None = None) -> float | None:
    """Check ``text`` as a value of ``kind``; the number it holds for scalar kinds (bounds), else None.
    Raises :class:`BadValue` where libsdformat refuses it."""
    value = text.strip(_TRIM)
    if not value:
        if required:
            raise BadValue("is empty, and the value is required")
        return None
    if kind in ("double", "float"):
        return stod(value, single=kind == "float")
    if kind == "int":
        return float(_integer(value, *_INT_RANGE))
    if kind == "unsigned int":
        return float(_integer(value, -_ULONG_MAX, _ULONG_MAX))
    if kind == "bool":
        if value.lower() not in ("true", "false", "1", "0"):
            raise BadValue("is not a boolean (true, false, 1 or 0)")
        return None
    if kind in _COUNTS:
        _stream_numbers(value, _COUNTS[kind], kind in ("vector2i", "time"))
        return None
    if kind == "pose":
        fmt = (rotation_format or "euler_rpy").strip(_TRIM)
        want = {"euler_rpy": 6, "quat_xyzw": 7}.get(fmt)
        if want is None:
            raise BadValue(f"has an unknown rotation_format {fmt!r}")
        vals = _words(value, "pose")
        if len(vals) != want:
            raise BadValue(f"is not a pose of {want} numbers (got {len(vals)})")
        if not all(math.isfinite(v) for v in vals):
            raise BadValue("is not finite")
        return None
    if kind == "color":
        vals = _words(value, "color")
        if len(vals) not in (3, 4) or any(v < 0.0 or v > 1.0 for v in vals):
            raise BadValue("is not a color (3 or 4 numbers in [0, 1])")
        return None
    return None  # string: any text

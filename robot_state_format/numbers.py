"""The one number grammar of every reader (URDF, xacro output, SDFormat, USDF).

Numbers are read as urdfdom and libsdformat read them: decimal in the C locale,
``[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?``; nothing else.  Python's ``float()``
alone would also take ``nan``, ``inf``, ``1_000`` and non-ASCII digits (``"\u0661"``, ARABIC-INDIC DIGIT ONE); those are
refused here.  A value is finite: one that overflows a double (``1e999``) is an error; one that
underflows to zero although its text is not zero (``1e-400``) is read as 0.0 and reported, so
readers can warn.

Two references read numbers a little differently, and each reader follows its own (flags, not a
second parser): urdfdom skips white space before a single value but refuses white space after it
(:func:`parse_number` with ``trailing_space=False``); libsdformat refuses a value that underflows
(``1e-400``, or a subnormal such as ``2.2e-310``: ``std::stod`` reports ERANGE), where urdfdom reads
it as 0 (:func:`parse_words` with ``sdformat=True``).

The checks are linear in the text and allocation-bounded: a list holding more than
:data:`robot_state_format.limits.MAX_NUMBERS_PER_LIST` numbers is refused before it is split.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from robot_state_format import limits

SYNTAX = "syntax"
NON_FINITE = "non-finite"
OVERFLOW = "overflow"
UNDERFLOW = "underflow"
TOO_MANY = "too-many"
_NONZERO = frozenset("123456789")
_NONFINITE_WORDS = frozenset({"nan", "inf", "infinity"})


class NumberError(ValueError):
    """Why a text is not a number (or a list of them).

    ``kind`` is :data:`SYNTAX`, :data:`NON_FINITE` (``nan``/``inf`` spelled out), :data:`OVERFLOW`
    (finite text beyond a double), :data:`UNDERFLOW` (libsdformat's dialect only) or :data:`TOO_MANY`;
    ``token`` is the offending word (the whole text for :data:`TOO_MANY`); the message is ready for a
    diagnostic.
    """

    def __init__(self, kind: str, token: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.token = token


@dataclass(frozen=True)
class Numbers:
    """The values of a list, and the words that underflowed to 0.0 (empty when none)."""

    values: tuple[float, ...]
    underflows: tuple[str, ...] = ()


def _shown(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:37] + "...")


def _token_error(token: str) -> NumberError:
    """The error for one word ``float()`` refused or that is not finite."""
    word = token.lstrip("+-").lower()
    if word in _NONFINITE_WORDS:
        return NumberError(NON_FINITE, token, f"{_shown(token)} is not a finite number")
    if token.isascii() and "_" not in token:
        try:
            value = float(token)
        except ValueError:
            pass
        else:
            if math.isinf(value):
                return NumberError(OVERFLOW, token, f"{_shown(token)} overflows a double")
    return NumberError(SYNTAX, token, f"{_shown(token)} is not a number")


def underflowed(token: str) -> bool:
    """Whether the word ``token`` (already read as 0.0) has a non-zero digit in its mantissa."""
    mantissa = token.lower().partition("e")[0]
    return not _NONZERO.isdisjoint(mantissa)


def may_underflow(text: str) -> bool:
    """A cheap pre-test: a word can underflow to 0.0 only with an exponent or with some 300
    leading zeros, so a text without ``e``/``E`` and without a long word never does."""
    return "e" in text or "E" in text or (len(text) > 300 and max(map(len, text.split())) > 300)


def plain_float(text: str | None) -> float | None:
    """The fast path of readers: the value of ``text`` when it is one finite number of the grammar
    that did not underflow, else None (the caller's detailed path then explains)."""
    if text is None or not text.isascii() or "_" in text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if value - value != 0.0 or (value == 0.0 and may_underflow(text)):
        return None
    return value


def parse_number(text: str, *, trailing_space: bool = True) -> tuple[float, bool]:
    """One number (surrounding XML white space allowed): ``(value, underflowed)``.

    ``trailing_space=False`` is urdfdom's dialect: white space before the number is skipped, white
    space after it is refused (``check_urdf`` refuses ``lower="0 "``).  Raises :class:`NumberError`.
    """
    token = text.strip(" \t\n\r")
    if not trailing_space and token and text.rstrip(" \t\n\r") != text:
        raise NumberError(SYNTAX, text, f"{_shown(text)} is not a number (white space after it)")
    if not token or not token.isascii() or "_" in token or len(token.split()) != 1:
        raise NumberError(SYNTAX, token, f"{_shown(text)} is not a number")
    try:
        value = float(token)
    except ValueError:
        raise _token_error(token) from None
    if value - value != 0.0:
        raise _token_error(token)
    return value, value == 0.0 and underflowed(token)


def split_bounded(text: str, max_count: int | None = None) -> list[str]:
    """The white-space separated words of ``text``; :class:`NumberError` (:data:`TOO_MANY`) when
    there are more than ``max_count`` (default :data:`~robot_state_format.limits.MAX_NUMBERS_PER_LIST`),
    found without splitting more than that many."""
    bound = limits.MAX_NUMBERS_PER_LIST if max_count is None else max_count
    parts = text.split(None, bound) if len(text) > 2 * bound else text.split()
    if len(parts) > bound:
        raise NumberError(TOO_MANY, "", f"more than {bound} numbers in one value "
                          "(RSF_MAX_NUMBERS_PER_LIST)")
    return parts


def parse_numbers(text: str, count: int | None = None, *, max_count: int | None = None) -> Numbers:
    """A white-space separated list of numbers; with ``count``, exactly that many.

    Raises :class:`NumberError`; a wrong count is a :data:`SYNTAX` error whose message gives both
    counts.
    """
    parts = split_bounded(text, max_count)
    if count is not None and len(parts) != count:
        raise NumberError(SYNTAX, text, f"expected {count} numbers, got {len(parts)}")
    return parse_words(parts)


def parse_words(parts: list[str], *, sdformat: bool = False) -> Numbers:
    """The values of words already split (see :func:`split_bounded`); :class:`NumberError` at the
    first bad one.

    ``sdformat=True`` is libsdformat's dialect: a word whose value underflows (to zero, or below the
    smallest normal double, as ``std::stod`` reports ERANGE) is an :data:`UNDERFLOW` error, not a
    value.
    """
    got = _parse_words(parts)
    if sdformat:
        for p, v in zip(parts, got.values):
            if (v == 0.0 and underflowed(p)) or (v != 0.0 and abs(v) < sys.float_info.min):
                raise NumberError(UNDERFLOW, p, f"{_shown(p)} underflows a double")
    return got


def _parse_words(parts: list[str]) -> Numbers:
    if all(map(str.isascii, parts)) and not any("_" in p for p in parts):
        try:
            values = tuple(map(float, parts))
        except ValueError:
            values = None
        if values is not None:
            total = sum(values)
            if total - total == 0.0 or all(map(math.isfinite, values)):  # every value finite
                if 0.0 in values:
                    return Numbers(values, zero_underflows(parts, values))
                return Numbers(values)
    for p in parts:  # name the first bad word
        if not p.isascii() or "_" in p:
            raise NumberError(SYNTAX, p, f"{_shown(p)} is not a number")
        try:
            v = float(p)
        except ValueError:
            raise _token_error(p) from None
        if v - v != 0.0:
            raise _token_error(p)
    raise AssertionError("unreachable: every word parsed")  # pragma: no cover


def zero_underflows(parts: list[str], values: tuple[float, ...] | list[float]) -> tuple[str, ...]:
    """The words among ``parts`` read as 0.0 whose text is not zero (``values`` parallel to
    ``parts``); looks at each distinct zero word once."""
    zeros = {p for p, v in zip(parts, values) if v == 0.0}
    return tuple(sorted(p for p in zeros if underflowed(p)))

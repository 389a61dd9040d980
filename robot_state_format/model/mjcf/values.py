"""Values MuJoCo refuses in the parts of an MJCF file the reader does not otherwise interpret.

Measured against MuJoCo 4.0 (``test/model/mjcf/test_mjcf_values.py``):

* a number too large for a double (``armature="1e400"``) in any attribute ("number is too large in
  attribute 'armature'"); the words ``inf`` and ``nan`` MuJoCo takes, and the reader refuses them where it
  reads them;
* an actuator whose ``ctrllimited``, ``forcelimited`` or ``actlimited`` is ``true`` (its own, or its default
  class's: every actuator element of a class shares one default) without ``range[0] < range[1]`` ("invalid
  control range", "invalid force range", "invalid actrange"); ``auto`` with a range limits only when
  ``range[0] < range[1]``, and with ``<compiler autolimits="false">`` a range without its flag is refused;
* a sensor without an attribute MuJoCo requires on it (``<accelerometer/>``: "required attribute missing:
  'site'"; ``<rangefinder/>``: "one of 'site', 'camera' must be specified"), from the table
  :mod:`.required_text` measured from MuJoCo.
"""

from __future__ import annotations

import math

from lxml import etree

from robot_state_format.errors import Severity
from robot_state_format.model.mjcf.document import MAIN, Document
from robot_state_format.model.mjcf.required_text import REQUIRED
from robot_state_format.model.mjcf.schema_check import children_of
from robot_state_format.model.xml import describe

__all__ = ["check_values"]

# attributes holding names or text, never numbers (a name may look like one)
_TEXT = frozenset({"name", "class", "childclass", "prefix", "file", "content_type", "joint", "site", "body",
                   "tendon", "actuator", "geom", "mesh", "material", "texture", "hfield", "camera", "objname",
                   "refname", "target", "model", "value"})
_RANGES = (("ctrllimited", "ctrlrange", "invalid control range for actuator"),
           ("forcelimited", "forcerange", "invalid force range for actuator"),
           ("actlimited", "actrange", "invalid actrange for actuator"))


def _overflows(token: str) -> bool:
    try:
        value = float(token)
    except ValueError:
        try:
            value = float.fromhex(token)
        except OverflowError:
            return True
        except ValueError:
            return False  # not a number: a text, or a bad number reported where it is read
    return math.isinf(value) and "inf" not in token.lower()


def _check_numbers(doc: Document) -> None:
    """After the reader's own checks: an element they already refused is not reported twice."""
    refused = {(d.file, d.line, d.element) for d in doc.diagnostics if d.severity is Severity.ERROR}
    for el in doc.root.iter():
        if not isinstance(el.tag, str) or el.tag == "text" or (doc.file_of(el), el.sourceline, describe(el)) in refused:
            continue
        for attr, text in el.attrib.items():
            if attr not in _TEXT and not str(attr).startswith("{") and any(map(_overflows, str(text).split())):
                doc.report(el, "MJCF_BAD_NUMBER", f"number is too large in attribute {str(attr)!r}")


def _actuator_value(doc: Document, el: etree._Element, attr: str, tags: list[str]) -> str | None:
    """``attr`` of an actuator: its own, else its class's (the element's own kind first, then any other)."""
    own = el.get(attr)
    if own is not None:
        return str(own)
    table = doc.defaults.get(el.get("class") or MAIN, {})
    for tag in (str(el.tag), *tags):
        value = table.get(tag, {}).get(attr)
        if value is not None:
            return value
    return None


def _numbers(text: str | None) -> list[float] | None:
    try:
        return [float(t) for t in text.split()] if text is not None else None
    except ValueError:
        return None  # a bad number is reported elsewhere


def _check_actuators(doc: Document) -> None:
    tags = [t for t in children_of("actuator") if t != "plugin"]
    for section in doc.root.iterchildren("actuator"):
        for el in section:
            if not isinstance(el.tag, str) or el.tag == "plugin":
                continue
            for flag, attr, reason in _RANGES:
                limited = _actuator_value(doc, el, flag, tags) or "auto"
                text = _actuator_value(doc, el, attr, tags)
                if limited == "auto" and text is not None and not doc.autolimits:
                    doc.report(el, "MJCF_LIMITED", f"actuator has `{attr}` but not `{flag}`. set the "
                               f"autolimits=\"true\" compiler option, specify `{flag}` explicitly, or remove the "
                               f"`{attr}` attribute")
                    continue
                r = _numbers(text) or [0.0, 0.0]
                if limited == "true" and len(r) >= 2 and r[0] >= r[1]:
                    doc.report(el, "MJCF_BAD_RANGE", f"{reason} ({flag} true, {attr} {text or '0 0'!r})")


def _check_sensors(doc: Document) -> None:
    table = REQUIRED["sensor"]
    for section in doc.root.iterchildren("sensor"):
        for el in section:
            if not isinstance(el.tag, str):
                continue
            for entry in table.get(str(el.tag), ()):
                alternatives = entry.split("|")  # "a|b": one of them
                if all(el.get(a) is None for a in alternatives):
                    doc.report(el, "MJCF_MISSING_ATTRIBUTE", f"required attribute missing: {entry!r}"
                               if len(alternatives) == 1 else "Schema violation: one of "
                               f"{', '.join(repr(a) for a in alternatives)} must be specified")
                    break


def check_values(doc: Document) -> None:
    """Report the values MuJoCo refuses (see the module text), after the reader's own checks."""
    _check_numbers(doc)
    _check_actuators(doc)
    _check_sensors(doc)

"""``<include><experimental:params>``: libsdformat 12's edits of an included model, checked as it refuses them.

Each child of ``<experimental:params>`` names an element of the included model by its ``element_id``
(``link::visual``) and carries an ``action`` (``add``, ``modify``, ``remove``, ``replace``), or none when
its own children carry one. libsdformat 12 (``ParamPassing``) refuses, and so does this check:

* a child without ``element_id``;
* an element that is no SDFormat element (the 1.9 descriptions know no element of that name);
* an ``action`` other than the four;
* an added element (``action="add"``) without a ``name`` attribute when it is the direct child;
* a child of an action-less element without an ``action``, or added where the description of the
  element it is added to has no such child (a ``<link>`` inside a ``<link>``).

What the edits change in the included model is not applied: the reader loads the model as included.
"""

from __future__ import annotations

from lxml import etree

from robot_state_format.model.sdf.elements import Report

NAMESPACE = "http://sdformat.org/schemas/experimental"
ACTIONS = ("add", "modify", "remove", "replace")


def is_params(el: etree._Element) -> bool:
    """Whether ``el`` is an ``<experimental:params>`` element."""
    if not isinstance(el.tag, str):
        return False
    q = etree.QName(el)
    return bool(q.localname == "params" and (q.namespace == NAMESPACE or el.prefix == "experimental"))


def check_params(params: etree._Element, children: dict[str, set[str]], report: Report, file: str) -> int:
    """Check one ``<experimental:params>``; the number of errors reported. ``children``: every element
    name of the descriptions, with the names of the children any element of that name may have."""
    errors = 0

    def error(message: str, el: etree._Element) -> None:
        nonlocal errors
        errors += 1
        report.error("SDF_INCLUDE_PARAMS", f"<experimental:params>: {message} (libsdformat refuses it)", file, el)

    for c in params:
        if not isinstance(c.tag, str):
            continue
        if c.get("element_id") is None:
            error(f"<{c.tag}> has no element_id attribute", c)
            continue
        if c.tag not in children:
            error(f"<{c.tag}> is not an SDFormat element", c)
            continue
        action = c.get("action")
        if action is not None:
            if action not in ACTIONS:
                error(f"<{c.tag}> has action {action!r} (one of {', '.join(ACTIONS)} expected)", c)
            elif action == "add" and c.get("name") is None:
                error(f"<{c.tag}> to be added has no name attribute", c)
            continue
        allowed = children[c.tag]
        for gc in c:
            if not isinstance(gc.tag, str):
                continue
            sub = gc.get("action")
            if sub is None:
                error(f"<{gc.tag}> in <{c.tag}> without an action has no action attribute", gc)
            elif sub not in ACTIONS:
                error(f"<{gc.tag}> has action {sub!r} (one of {', '.join(ACTIONS)} expected)", gc)
            elif gc.tag not in allowed:
                error(f"<{gc.tag}> is not an element of <{c.tag}>", gc)
    return errors

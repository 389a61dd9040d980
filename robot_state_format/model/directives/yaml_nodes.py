"""Safe YAML for Drake Model Directives: a composed node tree with line numbers and tags.

The document is only *composed* by PyYAML's safe loader (``yaml.compose(..., Loader=SafeLoader)``):
no Python object is ever constructed from a tag.  Scalars are read by the safe constructor (only to tell
a null) and keep their text: Drake types a scalar by its schema, not by YAML 1.1's rules (``-.5`` is a
number, ``on`` a name, ``010`` ten); the
tags Drake's schema uses (``!Rpy``, ``!AngleAxis``, ``!Identity``, ...) are kept as plain tag
strings for :mod:`.schema` to interpret.  Merge keys (``<<``) are flattened as YAML defines them.
Anchors and aliases share nodes, so the work of walking the tree is bounded: every visited node
counts against :data:`robot_state_format.limits.MAX_XML_ELEMENTS` (an alias bomb is refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.lazy_modules import lazy_module

__all__ = ["YNode", "parse_yaml"]

# PyYAML costs ~40 ms to import: its code runs when a scene is first read (check of a URDF never pays it)
yaml: Any = lazy_module("yaml")

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


@dataclass
class YNode:
    """A YAML node: ``kind`` is ``map``, ``seq`` or ``scalar``; ``tag`` is the explicit tag
    (``!Rpy``) or ``None``; ``line`` is 1-based."""

    kind: str
    line: int
    tag: str | None = None
    items: dict[str, YNode] = field(default_factory=dict)  # map
    key_lines: dict[str, int] = field(default_factory=dict)  # map: line of each key
    seq: list[YNode] = field(default_factory=list)  # seq
    value: object = None  # scalar (str, int, float, bool or None), as YAML 1.1 types it
    text: str = ""  # scalar: its text as written (quotes and escapes resolved): Drake's schema reads this


class _Budget:
    def __init__(self, file: str) -> None:
        self.left = limits.MAX_XML_ELEMENTS
        self.file = file

    def spend(self, line: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise ModelError(Diagnostic(
                "DMD_TOO_LARGE", f"the document expands to more than {limits.MAX_XML_ELEMENTS} YAML nodes "
                "(aliases included; RSF_MAX_XML_ELEMENTS)", self.file, line))


def _tag(node: Any, default: str) -> str | None:
    tag = str(node.tag)
    if tag == default or tag.startswith("tag:yaml.org,2002:"):
        return None
    return tag


def _convert(node: Any, budget: _Budget, constructor: Any) -> YNode:
    line = node.start_mark.line + 1
    budget.spend(line)
    if isinstance(node, yaml.MappingNode):
        constructor.flatten_mapping(node)
        out = YNode("map", line, _tag(node, _MAP))
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise ModelError(Diagnostic("DMD_YAML", "a mapping key must be a plain string", budget.file,
                                            k.start_mark.line + 1))
            key = str(k.value)
            if key in out.items:
                raise ModelError(Diagnostic("DMD_YAML", f"duplicate key {key!r}", budget.file, k.start_mark.line + 1))
            out.items[key] = _convert(v, budget, constructor)
            out.key_lines[key] = k.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        out = YNode("seq", line, _tag(node, _SEQ))
        out.seq = [_convert(v, budget, constructor) for v in node.value]
        return out
    assert isinstance(node, yaml.ScalarNode)
    tag = str(node.tag)
    if tag.startswith("tag:yaml.org,2002:"):
        try:
            value = constructor.construct_object(node, deep=False)
        except (yaml.YAMLError, ValueError) as exc:
            raise ModelError(Diagnostic("DMD_YAML", f"bad scalar {node.value!r}: {exc}", budget.file, line)) from None
        if not isinstance(value, (str, int, float, bool, type(None))):
            value = str(node.value)  # timestamps, binary: kept as their text
        return YNode("scalar", line, None, value=value, text=str(node.value))
    return YNode("scalar", line, tag, value=str(node.value), text=str(node.value))


def parse_yaml(text: str | bytes, file: str) -> YNode | None:
    """The document's root node (``None`` for an empty document); ``ModelError`` (``DMD_YAML``)
    on a syntax error, with the line."""
    budget = _Budget(file)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        if root is None:
            return None
        return _convert(root, budget, yaml.constructor.SafeConstructor())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ModelError(Diagnostic("DMD_YAML", f"invalid YAML: {exc.problem or exc}", file, line)) from None
    except yaml.YAMLError as exc:
        raise ModelError(Diagnostic("DMD_YAML", f"invalid YAML: {exc}", file, None)) from None
    except RecursionError:
        raise ModelError(Diagnostic("DMD_TOO_DEEP", "the document nests too deeply to be read", file, None)) from None

"""The simulator-state extension of USDF (docs/usdf-spec.md §13): what a simulator needs beyond the
spec's elements to continue a run bit for bit.

```xml
<sim:simulator_state xmlns:sim="urn:robot-state-format:usdf:simulator:1" engine="mujoco"
    engine_version="4.0.0" layout="1f0c..." step="500" dt="0.002">
  <sim:time>1.0000000000000007</sim:time>
  <sim:array name="qpos">0.1 0.2 ...</sim:array>
  <sim:array name="qacc_warmstart">...</sim:array>
</sim:simulator_state>
```

``layout`` fingerprints the simulator's model (coordinate counts, joint names and types), so a
file written for another model is recognised and its extension ignored.  Numbers are written
with ``repr`` (bit-exact).  Readers that do not know the namespace ignore the element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from lxml import etree

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.model.xml import safe_parser
from robot_state_format.usdf.types import ExtensionElement, WorldState
from robot_state_format.usdf.writer import format_floats

NAMESPACE = "urn:robot-state-format:usdf:simulator:1"
TAG = "simulator_state"


@dataclass
class SimulatorState:
    engine: str  # "mujoco", "drake"
    layout: str  # fingerprint of the simulator's model
    time: float  # simulation time (s), exact
    arrays: dict[str, tuple[float, ...]] = field(default_factory=dict)  # name -> values, in write order
    step: int | None = None  # steps taken since the simulation's zero state
    engine_version: str | None = None
    dt: float | None = None  # the time step the run used (s)


def to_extension(s: SimulatorState) -> ExtensionElement:
    """The extension element holding ``s``."""
    attrs = f"engine={quoteattr(s.engine)}"
    if s.engine_version is not None:
        attrs += f" engine_version={quoteattr(s.engine_version)}"
    attrs += f" layout={quoteattr(s.layout)}"
    if s.step is not None:
        attrs += f' step="{int(s.step)}"'
    if s.dt is not None:
        attrs += f' dt="{format_floats([s.dt], "simulator_state/dt")}"'
    lines = [f'<sim:{TAG} xmlns:sim="{NAMESPACE}" {attrs}>',
             f"    <sim:time>{format_floats([s.time], 'simulator_state/time')}</sim:time>"]
    for name, values in s.arrays.items():
        lines.append(f"    <sim:array name={quoteattr(name)}>{format_floats(values, f'array[{name}]')}</sim:array>")
    lines.append(f"  </sim:{TAG}>")
    return ExtensionElement(NAMESPACE, TAG, "\n".join(lines))


def _bad(msg: str, el: etree._Element | None = None) -> UsdfError:
    return UsdfError(Diagnostic("USDF_EXTENSION", f"simulator_state: {msg}", "<extension>",
                                None if el is None else el.sourceline, TAG))


def _floats(el: etree._Element) -> tuple[float, ...]:
    try:
        vals = tuple(float(t) for t in (el.text or "").split())
    except ValueError:
        raise _bad(f"<{etree.QName(el).localname}> holds non-numbers", el) from None
    if any(v - v != 0.0 for v in vals):
        raise _bad(f"<{etree.QName(el).localname}> holds a non-finite value", el)
    return vals


def from_extension(ext: ExtensionElement) -> SimulatorState:
    """Parse the extension element (``UsdfError`` ``USDF_EXTENSION`` when malformed)."""
    try:
        root = etree.fromstring(ext.xml.encode("utf-8"), safe_parser())
    except (etree.LxmlError, ValueError) as exc:
        raise _bad(f"not well-formed: {exc}") from None
    if root.tag != f"{{{NAMESPACE}}}{TAG}":
        raise _bad(f"unexpected element {root.tag}", root)
    engine, layout = root.get("engine"), root.get("layout")
    if not engine or layout is None:
        raise _bad("needs engine and layout attributes", root)
    step_text = root.get("step")
    step = None
    if step_text is not None:
        if not step_text.strip().isdigit():
            raise _bad(f"step={step_text!r} is not a non-negative integer", root)
        step = int(step_text)
    dt: float | None = None
    dt_text = root.get("dt")
    if dt_text is not None:
        try:
            dt = float(dt_text)
        except ValueError:
            raise _bad(f"dt={dt_text!r} is not a number", root) from None
        if not dt > 0 or dt - dt != 0.0:
            raise _bad(f"dt={dt_text!r} must be a positive finite number", root)
    time: float | None = None
    arrays: dict[str, tuple[float, ...]] = {}
    for child in root:
        if not isinstance(child.tag, str):
            continue
        local = etree.QName(child).localname
        if child.tag == f"{{{NAMESPACE}}}time":
            vals = _floats(child)
            if len(vals) != 1:
                raise _bad("<time> holds one number", child)
            time = vals[0]
        elif child.tag == f"{{{NAMESPACE}}}array":
            name = child.get("name")
            if not name or name in arrays:
                raise _bad("an <array> needs a unique name", child)
            arrays[name] = _floats(child)
        else:
            raise _bad(f"unknown element <{local}>", child)
    if time is None:
        raise _bad("missing <time>", root)
    return SimulatorState(engine, layout, time, arrays, step, root.get("engine_version"), dt)


def find_simulator_state(state: WorldState, engine: str | None = None) -> SimulatorState | None:
    """The simulator state stored in ``state`` (for ``engine``), or None."""
    for ext in state.extensions:
        if ext.namespace == NAMESPACE and ext.tag == TAG:
            s = from_extension(ext)
            if engine is None or s.engine == engine:
                return s
    return None


def set_simulator_state(state: WorldState, s: SimulatorState) -> None:
    """Store ``s`` in ``state``, replacing a simulator state of the same engine."""
    keep = []
    for ext in state.extensions:
        if ext.namespace == NAMESPACE and ext.tag == TAG and from_extension(ext).engine == s.engine:
            continue
        keep.append(ext)
    keep.append(to_extension(s))
    state.extensions = keep

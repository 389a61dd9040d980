"""Fuzzing harness of the readers (URDF, SDFormat, xacro, USDF) and the USDF writer round trip.

Every input ends in one of three outcome classes (:func:`classify`):

* ``domain-error``: the project's own error (a :class:`DiagnosticError` whose diagnostics carry
  stable codes, the given file name and a line inside the document; or another
  :class:`RobotStateFormatError` with a message);
* ``success``: a result that holds the target's invariants (a model whose joints name existing
  links, finite poses and a kinematic tree that compiles; a USDF state that the writer writes and the
  reader reads back equal, twice);
* ``finding``: anything else: another exception, a broken invariant, a call past the time deadline,
  or memory past the bound (the long runs set ``RLIMIT_AS``: a ``MemoryError`` is a finding).

Inputs come from a seed corpus (the bundled samples and test fixtures) mutated by Hypothesis.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_state_format.errors import DiagnosticError, RobotStateFormatError
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.loader import load_xacro
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import WORLD, Model
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import WorldState
from robot_state_format.usdf.writer import write_world_state

ROOT = Path(__file__).resolve().parents[1]
FINDINGS_DIR = ROOT / "test" / "fixtures" / "fuzz"
DEADLINE_S = 2.0
MEMORY_BOUND_BYTES = 1 << 30  # RLIMIT_AS of a long run (the interpreter and numpy included)
FILE = "fuzz.xml"
_CODE = re.compile(r"[A-Z][A-Z0-9_]*")

DOMAIN_ERROR = "domain-error"
SUCCESS = "success"
FINDING = "finding"


@dataclass(frozen=True)
class Outcome:
    kind: str
    detail: str
    seconds: float


class InvariantBroken(AssertionError):
    """A result that violates the target's invariants (a finding)."""


def _lines(data: bytes | str) -> int:
    return (data.count("\n") if isinstance(data, str) else data.count(b"\n")) + 1


def check_diagnostics(exc: DiagnosticError, data: bytes | str) -> None:
    n = _lines(data)
    for d in exc.diagnostics:
        if not _CODE.fullmatch(d.code):
            raise InvariantBroken(f"diagnostic code {d.code!r} is not a stable code")
        if d.line is not None and not (1 <= d.line <= n):
            raise InvariantBroken(f"{d.code} at line {d.line}, outside the document's {n} lines")
        if d.file != FILE and not d.file.startswith(("/", "<")):
            raise InvariantBroken(f"{d.code} names file {d.file!r}")


def check_model(model: Model) -> None:
    """What every model read successfully holds."""
    if not isinstance(model, Model):
        raise InvariantBroken(f"the reader returned {type(model).__name__}")
    for j in model.joints.values():
        if j.child not in model.links or not (j.parent in model.links or j.parent == WORLD):
            raise InvariantBroken(f"joint {j.name!r} names a missing link ({j.parent!r} -> {j.child!r})")
        for m in (j.origin, j.child_offset):
            if not np.all(np.isfinite(m)):
                raise InvariantBroken(f"joint {j.name!r} has a non-finite transform")
    for link in model.links.values():
        if not np.all(np.isfinite(link.pose)):
            raise InvariantBroken(f"link {link.name!r} has a non-finite pose")
    with contextlib.suppress(RobotStateFormatError):  # a model the kinematics refuses says why: fine
        compile_model(model)
    for w in model.warnings:
        if not _CODE.fullmatch(w.code):
            raise InvariantBroken(f"warning code {w.code!r} is not a stable code")


def check_round_trip(state: WorldState) -> None:
    """The writer writes what the reader read, and reading that back gives the same state, twice."""
    text = write_world_state(state)
    again = read_world_state(text).state
    if again != state:
        raise InvariantBroken("write(read(x)) reads back to a different state")
    if write_world_state(again) != text:
        raise InvariantBroken("the writer is not deterministic on its own output")


def _urdf(data: bytes | str) -> None:
    check_model(read_urdf(data, file=FILE))


def _sdf(data: bytes | str) -> None:
    check_model(read_sdf(data, file=FILE))


def _xacro(data: bytes | str) -> None:
    check_model(load_xacro(data, file=FILE).model)


def _usdf(data: bytes | str) -> None:
    check_round_trip(read_world_state(data, file=FILE).state)


def _usdf_writer(state: object) -> None:
    if not isinstance(state, WorldState):
        raise TypeError("the writer target takes a WorldState")
    try:
        text = write_world_state(state)
    except DiagnosticError:
        raise  # a state the writer refuses (non-finite value, bad name): a domain error
    got = read_world_state(text).state
    if got != state:
        raise InvariantBroken("the reader reads back a different state than the writer was given")
    check_round_trip(got)


TARGETS: dict[str, Callable[[object], None]] = {
    "urdf": _urdf,  # type: ignore[dict-item]
    "sdf": _sdf,  # type: ignore[dict-item]
    "xacro": _xacro,  # type: ignore[dict-item]
    "usdf": _usdf,  # type: ignore[dict-item]
    "usdf-writer": _usdf_writer,
}


def classify(target: str, data: object, deadline: float = DEADLINE_S) -> Outcome:
    """Run ``target`` on ``data`` and say which outcome class it fell in."""
    t0 = time.perf_counter()
    try:
        TARGETS[target](data)
        kind, detail = SUCCESS, ""
    except InvariantBroken as exc:
        kind, detail = FINDING, f"invariant: {exc}"
    except DiagnosticError as exc:
        try:
            if isinstance(data, (bytes, str)):
                check_diagnostics(exc, data)
            kind, detail = DOMAIN_ERROR, exc.code
        except InvariantBroken as bad:
            kind, detail = FINDING, f"invariant: {bad}"
    except RobotStateFormatError as exc:
        kind, detail = (DOMAIN_ERROR, type(exc).__name__) if str(exc) else (FINDING, "an error without a message")
    except MemoryError:
        kind, detail = FINDING, "memory past the bound (MemoryError)"
    except RecursionError:
        kind, detail = FINDING, "RecursionError"
    except Exception as exc:  # noqa: BLE001 any other exception is the finding
        kind, detail = FINDING, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - t0
    if kind != FINDING and seconds > deadline:
        kind, detail = FINDING, f"past the {deadline:g} s deadline ({seconds:.2f} s)"
    return Outcome(kind, detail, seconds)


def seeds(target: str) -> list[bytes]:
    """The seed corpus of a reader target: bundled samples and test fixtures of its format."""
    samples = ROOT / "robot_state_format" / "samples"
    fixtures = ROOT / "test" / "fixtures"
    if target == "urdf":
        paths = sorted(samples.glob("*.urdf")) + sorted((fixtures / "urdf").rglob("*.urdf"))
    elif target == "sdf":
        paths = sorted(samples.glob("*.sdf")) + sorted((fixtures / "sdf").glob("*.sdf"))
    elif target == "xacro":
        paths = sorted(fixtures.rglob("*.xacro"))
        return [p.read_bytes() for p in paths] + [XACRO_SEED]
    elif target == "usdf":
        paths = sorted((fixtures / "usdf" / "valid").glob("*.xml")) + sorted((fixtures / "usdf" / "lenient").glob("*"))
    else:
        return []
    corpus = [p.read_bytes() for p in paths if p.is_file()]
    # mostly documents the reader accepts (mutations then reach deep), a few it refuses
    good = [d for d in corpus if classify(target, d).kind == SUCCESS]
    return good + [d for d in corpus if d not in good][:4]


XACRO_SEED = b"""<?xml version="1.0"?>
<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="l" value="0.5"/>
  <xacro:arg name="prefix" default="a_"/>
  <xacro:macro name="seg" params="n parent">
    <link name="$(arg prefix)l${n}"/>
    <joint name="$(arg prefix)j${n}" type="revolute">
      <parent link="${parent}"/><child link="$(arg prefix)l${n}"/>
      <origin xyz="0 0 ${l * 2}" rpy="0 ${pi/2} 0"/><axis xyz="0 1 0"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/>
    </joint>
  </xacro:macro>
  <link name="base"/>
  <xacro:seg n="1" parent="base"/>
  <xacro:seg n="2" parent="$(arg prefix)l1"/>
  <xacro:if value="${l > 0.1}"><link name="extra"/>
    <joint name="je" type="fixed"><parent link="base"/><child link="extra"/></joint></xacro:if>
</robot>
"""


def save_finding(target: str, data: object, outcome: Outcome) -> Path | None:
    """Keep a reproducer as a regression fixture: ``test/fixtures/fuzz/TARGET-HASH.bin`` (bytes)
    or ``.txt`` (text), with the finding in a ``.why`` file beside it."""
    if isinstance(data, str):
        raw, suffix = data.encode("utf-8", "surrogatepass"), ".txt"
    elif isinstance(data, bytes):
        raw, suffix = data, ".bin"
    elif isinstance(data, WorldState):
        raw, suffix = repr(data).encode(), ".repr"
    else:
        return None
    FINDINGS_DIR.mkdir(parents=True, exist_ok=True)
    path = FINDINGS_DIR / f"{target}-{hashlib.sha256(raw).hexdigest()[:12]}{suffix}"
    path.write_bytes(raw)
    path.with_suffix(".why").write_text(f"was: {outcome.kind}: {outcome.detail}\n")
    return path


def expected_outcome(path: Path) -> tuple[str, str] | None:
    """The ``expect: KIND DETAIL`` line of a reproducer's ``.why`` file (added once the finding is
    fixed), or None."""
    why = path.with_suffix(".why")
    if not why.is_file():
        return None
    for line in why.read_text().splitlines():
        if line.startswith("expect:"):
            kind, _, detail = line[len("expect:"):].strip().partition(" ")
            return kind, detail.strip()
    return None


def load_reproducers() -> list[tuple[str, object, Path]]:
    """Every kept reproducer: (target, input, path)."""
    out: list[tuple[str, object, Path]] = []
    if not FINDINGS_DIR.is_dir():
        return out
    for p in sorted(FINDINGS_DIR.iterdir()):
        target = p.name.rsplit("-", 1)[0]
        if target not in TARGETS or p.suffix not in (".bin", ".txt"):
            continue
        raw = p.read_bytes()
        out.append((target, raw.decode("utf-8", "surrogatepass") if p.suffix == ".txt" else raw, p))
    return out



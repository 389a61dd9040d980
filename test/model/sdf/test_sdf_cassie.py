"""Cassie's SDFormat 1.6 files (example-robot-data): kinematic loops, gearboxes, nothing dropped.

Expected poses are recomputed here straight from the XML with the 1.6 rules (link poses in the
model frame, joint poses relative to the child link, axes in the joint frame)."""

from __future__ import annotations

import numpy as np
import pytest
import reference_kinematics as ref
from lxml import etree
from real_robots import SKIP_REASON, robots_dir

from robot_state_format.errors import ModelError
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import JointType

CASSIE = robots_dir() / "cassie_description" / "robots" if robots_dir() is not None else None
FILES = sorted(CASSIE.glob("*.sdf")) if CASSIE is not None else []


def _pose(el: etree._Element) -> np.ndarray:
    p = el.find("pose")
    return ref.pose(*[float(v) for v in p.text.split()]) if p is not None else np.eye(4)


def _read(path):  # type: ignore[no-untyped-def]
    """cassie.sdf gives two foot-reference links an inertia that breaks the triangle inequality
    (izz 9.4e-06 > ixx + iyy): libsdformat refuses the file ("has invalid inertia"), and so does the
    reader; the structure is checked on a copy whose two inertias are mended."""
    data = path.read_bytes()
    try:
        return read_sdf(data, file=str(path))
    except ModelError as exc:
        assert path.name == "cassie.sdf", exc
        bad = list(exc.errors)
        assert [d.code for d in bad] == ["SDF_INVALID_INERTIA"] * 2
        root = etree.fromstring(data)
        for d in bad:
            inertial = next(el for el in root.iter("inertial") if el.sourceline == d.line)
            inertial.find("inertia/izz").text = "9.4e-07"
        return read_sdf(etree.tostring(root), file=str(path))


@pytest.mark.skipif(not FILES, reason=SKIP_REASON)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_cassie(path) -> None:  # type: ignore[no-untyped-def]
    m = _read(path)
    root = etree.parse(str(path)).getroot()
    model = root.find("model")
    links = {el.get("name"): _pose(el) for el in model.findall("link")}
    joints = model.findall("joint")
    assert m.version == "1.6" and set(m.links) == set(links)
    # Nothing dropped: every joint is a tree joint or a constraint.
    assert len(m.joints) + len(m.constraints) == len(joints)
    gearboxes = {j.get("name") for j in joints if j.get("type") == "gearbox"}
    assert {n for n, j in m.constraints.items() if j.type is JointType.GEARBOX} == gearboxes
    loops = [w for w in m.warnings if w.code == "SDF_KINEMATIC_LOOP"]
    assert len(loops) == len(m.constraints) - len(gearboxes)
    # A tree: each link is the child of at most one tree joint; one root per connected piece.
    children = [j.child for j in m.joints.values()]
    assert len(children) == len(set(children))
    assert len(m.root_links()) == len(m.links) - len(m.joints)
    for name, x in links.items():
        np.testing.assert_allclose(m.links[name].pose, x, atol=1e-12, rtol=0)
    for el in joints:
        name = el.get("name")
        j = m.joints.get(name) or m.constraints[name]
        parent, child = el.findtext("parent"), el.findtext("child")
        x_mj = links[child] @ _pose(el)
        x_mp = np.eye(4) if parent == "world" else links[parent]
        np.testing.assert_allclose(j.origin, np.linalg.inv(x_mp) @ x_mj, atol=1e-9, rtol=0)
        np.testing.assert_allclose(j.child_offset, np.linalg.inv(_pose(el)), atol=1e-9, rtol=0)
        xyz = el.findtext("axis/xyz")
        if xyz is not None and j.axis is not None:
            v = np.array([float(t) for t in xyz.split()])
            if el.findtext("axis/use_parent_model_frame", "0").strip() in ("1", "true"):
                v = x_mj[:3, :3].T @ v  # given in the model frame
            np.testing.assert_allclose(j.axis, v / np.linalg.norm(v), atol=1e-12, rtol=0)

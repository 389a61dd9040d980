"""What may be saved as the current state: only measured values, recent enough (docs/state_store.md).

No rclpy here. ``state_store`` asks these before it writes a restart file or a checkpoint:

* :func:`unmeasured_joints`: the moving joints of a model a snapshot gives no positions for;
* :func:`drop_unmeasured`: a snapshot without the joints nobody reported and without the links they
  move (the ``allow_partial`` opt-in: what is known is written, nothing is set to zero);
* :func:`age_refusal`: why a snapshot is too old to be saved as the current state (asked once its
  publisher is gone);
* :func:`missing_refusal`: the refusal naming the joints that were never reported.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from robot_state_format.model.types import SCOPE, Model
from robot_state_format.usdf.types import JointState, ModelState, WorldState

SHOWN = 20  # joint names listed in one message


def _flatten(ms: ModelState, prefix: str = "") -> dict[str, JointState]:
    out = {f"{prefix}{js.name}": js for js in ms.joint_states}
    for sub in ms.model_states:
        out.update(_flatten(sub, f"{prefix}{sub.name}{SCOPE}"))
    return out


def _top_states(state: WorldState, model: Model) -> list[tuple[ModelState, str]]:
    """The model_states holding ``model``'s joints, each with the prefix of its names in the model."""
    if model.is_world:
        return [(ms, f"{ms.name}{SCOPE}") for ms in state.model_states]
    top = state.model(model.name)
    if top is None and len(state.model_states) == 1:
        top = state.model_states[0]
    return [(top, "")] if top is not None else []


def moving_leaders(model: Model) -> list[str]:
    """The moving joints whose values must be measured (mimic followers follow their leader)."""
    return [j.name for j in model.joints.values() if j.is_moving and not j.mimic]


def unmeasured_joints(state: WorldState, model: Model) -> list[str]:
    """Moving, non-mimic joints of ``model`` for which ``state`` holds no positions."""
    joints: dict[str, JointState] = {}
    for ms, prefix in _top_states(state, model):
        joints.update(_flatten(ms, prefix))
    return [n for n in moving_leaders(model) if n not in joints or joints[n].positions is None]


def with_followers(model: Model, names: Iterable[str]) -> set[str]:
    """``names`` and every joint that mimics one of them (transitively)."""
    out = set(names)
    changed = True
    while changed:
        changed = False
        for j in model.joints.values():
            if j.mimic and j.name not in out and j.mimic[0].joint in out:
                out.add(j.name)
                changed = True
    return out


def moved_links(model: Model, joints: set[str]) -> set[str]:
    """Links whose pose depends on any of ``joints``: their child links and everything below."""
    children: dict[str, list[str]] = {}
    for j in model.joints.values():
        children.setdefault(j.parent, []).append(j.child)
    out: set[str] = set()
    stack = [model.joints[n].child for n in joints if n in model.joints]
    while stack:
        link = stack.pop()
        if link in out:
            continue
        out.add(link)
        stack.extend(children.get(link, ()))
    return out


def drop_unmeasured(state: WorldState, model: Model, unheard: Iterable[str]) -> WorldState:
    """A copy of ``state`` without the joint_states of ``unheard`` joints (and their mimic followers)
    and without the link_states of the links they move: unknown values are left out, never zero."""
    joints = with_followers(model, unheard)
    links = moved_links(model, joints)
    out = copy.deepcopy(state)

    def prune(ms: ModelState, prefix: str) -> None:
        ms.joint_states = [js for js in ms.joint_states if f"{prefix}{js.name}" not in joints]
        ms.link_states = [ls for ls in ms.link_states if f"{prefix}{ls.name}" not in links]
        for sub in ms.model_states:
            prune(sub, f"{prefix}{sub.name}{SCOPE}")

    for ms, prefix in _top_states(out, model):
        prune(ms, prefix)
    return out


def names_text(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def missing_refusal(missing: list[str], total: int) -> str:
    """The refusal of a save while moving joints were never reported."""
    return (f"refused: no JointState has reported {len(missing)} of {total} moving joint(s) of the model: "
            f"{names_text(missing)}; nothing written (set allow_partial to write only the measured joints)")


def age_refusal(age_s: float, max_age_s: float) -> str | None:
    """Why a snapshot received ``age_s`` seconds ago is not saved as current (None: it is recent)."""
    if max_age_s <= 0 or age_s <= max_age_s:
        return None
    return (f"refused: the newest snapshot is {age_s:.1f} s old (max_snapshot_age {max_age_s:g} s) and its "
            "publisher is gone: not the current state; nothing written")

"""The text of the state_publisher's ``world_state``: the model's pose set in the builder's snapshot.

:func:`patch_model_pose` edits the pretty-printed document the USDF SnapshotBuilder wrote (its fast
text path, kept for snapshots at up to 1 kHz), using the writer's own escaping and number format.
"""

from __future__ import annotations

from robot_state_format.usdf.writer import escape_name, format_floats


def waiting_text(missing: list[str], total: int) -> str:
    """The line logged while some moving joints have not been reported yet."""
    shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
    return (f"world_state not published yet: no JointState has reported {len(missing)} of {total} moving "
            f"joint(s): {shown}")


def patch_model_pose(text: str, pose: tuple[float, ...] | None, parent: str | None,
                     parent_pose: tuple[float, ...] | None) -> str:
    """Set the first (top-level) model_state's parent and pose in a pretty-printed world_state.

    ``pose`` None removes the model_state's pose and twist (unknown); with ``parent`` the pose is
    relative to it, the twist is removed (TF does not give it) and ``parent`` is declared as a
    ``<frame>`` (posed in the world by ``parent_pose`` when known).
    """
    start = text.find("<model_state ")
    if start < 0:
        return text
    head_end = text.index(">", start) + 1
    line_end = text.index("\n", head_end) + 1
    indent = text[text.rfind("\n", 0, start) + 1:start]
    inner = indent + "  "
    pos = line_end
    for tag in ("pose", "twist"):  # the model_state's own pose/twist lines, if present
        if text.startswith(f"{inner}<{tag}>", pos):
            pos = text.index("\n", pos) + 1
    lines = []
    if parent is not None:
        lines.append(f"{inner}<parent>{escape_name(parent)}</parent>\n")
    if pose is not None:
        lines.append(f"{inner}<pose>{format_floats(pose)}</pose>\n")
        if parent is None:
            twist_start = text.find(f"{inner}<twist>", line_end, pos)
            if twist_start >= 0:
                lines.append(text[twist_start:pos])
    out = text[:line_end] + "".join(lines) + text[pos:]
    if parent is not None:
        frame = [f'{indent}<frame name="{escape_name(parent)}">\n']
        if parent_pose is not None:
            frame.append(f"{inner}<pose>{format_floats(parent_pose)}</pose>\n")
        frame.append(f"{indent}</frame>\n")
        out = out[:start - len(indent)] + "".join(frame) + out[start - len(indent):]
    return out


__all__ = ["patch_model_pose", "waiting_text"]

"""The robot description of a node: exactly one of a description text or a model file, xacro expanded.

Shared by the nodes that take the ``robot_description`` / ``model_file`` / ``xacro_args`` parameters.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from robot_state_format.errors import ModelIOError, RobotStateFormatError
from robot_state_format.limits import read_input_file
from robot_state_format.model.loader import detect_format, load_model, load_xacro
from robot_state_format.model.types import Model
from robot_state_format.model.xacro import parse_xacro_args as xacro_args_from_words


class DescriptionConfigError(RobotStateFormatError):
    """The description parameters are not usable (none or both given, xacro arguments that do not parse)."""


@dataclass
class LoadedDescription:
    """A robot description read and expanded: the text published on ``robot_description``."""

    text: str
    model: Model
    source: str


def xacro_args_from_text(text: str) -> dict[str, str]:
    """``"a:=1 b:=two"`` → ``{"a": "1", "b": "two"}`` (shell quoting allowed)."""
    try:
        return xacro_args_from_words(shlex.split(text))
    except ValueError as exc:
        raise DescriptionConfigError(f"xacro_args: {exc}") from None


def load_description(description: str, model_file: str, xacro_args: str) -> LoadedDescription:
    """Read exactly one of a description text or a model file (xacro expanded).

    Raises :class:`DescriptionConfigError` for none or both given, :class:`~robot_state_format.errors.ModelIOError`
    for a file that cannot be read, and the readers' errors for a description that does not parse.
    """
    if bool(description.strip()) == bool(model_file.strip()):
        raise DescriptionConfigError(
            "give exactly one of the parameters robot_description (URDF, SDFormat or xacro text) or "
            "model_file (path to a .urdf, .sdf, .world or .xacro file)"
            + ("; both are set" if description.strip() else "; neither is set"))
    args = xacro_args_from_text(xacro_args)
    if model_file.strip():
        path = Path(model_file).expanduser()
        try:
            data = read_input_file(path)
        except OSError as exc:
            what = "is a directory, expected a model file" if path.is_dir() else f"cannot read: {exc.strerror or exc}"
            raise ModelIOError(f"model_file {str(path)!r}: {what}") from None
        if detect_format(data, str(path)) == "xacro":
            text, model = load_xacro(data, file=str(path), xacro_args=args)
            return LoadedDescription(text, model, str(path))
        text = data.decode("utf-8", "replace")
        return LoadedDescription(text, load_model(text, file=str(path)), str(path))
    text = description
    if detect_format(text) == "xacro":
        text, model = load_xacro(text, file="<robot_description>", xacro_args=args)
        return LoadedDescription(text, model, "robot_description")
    return LoadedDescription(text, load_model(text, file="<robot_description>"), "robot_description")


__all__ = ["DescriptionConfigError", "LoadedDescription", "load_description", "xacro_args_from_text"]

"""Drake Model Directives (``.dmd.yaml``) reader: ``read_directives(text) -> Model``.

Modules: :mod:`.yaml_nodes` (safe YAML with lines and tags), :mod:`.schema` (Drake's directive
schema and transforms), :mod:`.compose` (directives → one world Model, as pydrake's
``ProcessModelDirectives`` builds its plant).  The model files a scene adds are read by the
project's own readers (``load_file``).  See docs/models.md, "Drake Model Directives".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model import access
from robot_state_format.model.detect import DIRECTIVES_SUFFIX, looks_like_directives
from robot_state_format.model.directives.compose import Composer, LoadFile
from robot_state_format.model.directives.schema import Directive, read_schema
from robot_state_format.model.directives.yaml_nodes import parse_yaml
from robot_state_format.model.types import Model

__all__ = ["DIRECTIVES_SUFFIX", "looks_like_directives", "read_directives"]


def _parse(text: str | bytes, file: str) -> list[Directive]:
    return read_schema(parse_yaml(text, file), file)


def _read_file(path: Path, uri: str, referrer: str) -> list[Directive]:
    try:
        data = access.read_included(path, uri=uri, referrer=referrer)
    except OSError as exc:
        raise ModelError(Diagnostic("DMD_FILE_NOT_FOUND", f"cannot read: {exc.strerror or exc}", str(path), None)) \
            from None
    return _parse(data, str(path))


def _name(file: str) -> str:
    base = Path(file).name
    for suffix in (DIRECTIVES_SUFFIX, ".yaml", ".yml"):
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[:-len(suffix)]
    return base or "scene"


def read_directives(text: str | bytes, *, file: str = "<string>", load_file: LoadFile,
                    search_paths: Sequence[str] = ()) -> Model:
    """Read a Model Directives document into one world :class:`Model` (a model per instance).

    ``load_file(path)`` reads each added model file (URDF, SDFormat); ``package://`` and
    ``model://`` URIs resolve through the ament index, ``ROS_PACKAGE_PATH`` and ``search_paths``.
    Raises :class:`ModelError` (codes ``DMD_*``) naming file, line and directive.
    """
    model = Model(name=_name(file), format="dmd", is_world=True, source_file=file)
    composer = Composer(model, load_file, _read_file, search_paths)
    if not file.startswith("<"):
        composer.stack.append(Path(file).resolve())
    with np.errstate(over="ignore", invalid="ignore"):
        composer.process(_parse(text, file), "", file)
        return composer.finish()

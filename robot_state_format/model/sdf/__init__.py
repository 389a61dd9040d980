"""SDFormat 1.0-1.11 reader: ``read_sdf(text) -> Model``.

Modules: :mod:`.elements` (values, poses, geometry), :mod:`.parse` (XML → scopes with each
version's conventions), :mod:`.include` (``//include`` resolution), :mod:`.drake` (Drake's
extensions), :mod:`.naming` (naming rules), :mod:`.graph` (pose and attached-to graphs),
:mod:`.build` (scopes → Model, spanning tree).  See docs/sdformat.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.sdf.build import build
from robot_state_format.model.sdf.elements import Report
from robot_state_format.model.sdf.parse import Parser
from robot_state_format.model.types import Model

__all__ = ["read_sdf"]


def read_sdf(text: str | bytes, *, file: str = "<string>", search_paths: Sequence[str] = ()) -> Model:
    """Read an SDFormat document (a model or a world) into a :class:`Model`.

    Raises :class:`~robot_state_format.errors.ModelError` listing every error found; warnings
    end up in ``Model.warnings``.  Includes resolve next to ``file``, in ``search_paths`` and in
    ``GZ_SIM_RESOURCE_PATH`` / ``SDF_PATH``.
    """
    report = Report()
    parser = Parser(report, search_paths)
    if not file.startswith("<"):
        with contextlib.suppress(OSError, RuntimeError):
            parser.include_stack.append(str(Path(file).resolve()))
    model: Model | None = None
    try:
        # Huge values may overflow: non-finite results are reported as SDF_INVALID, not warned about.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            root = parser.read_document(text, file)
            if root is not None and not report.errors:
                model = build(root, report, file)
    except ModelError as exc:
        report.diagnostics.extend(exc.diagnostics)
    except RecursionError:
        report.error("SDF_TOO_DEEP", "the document nests too deeply to be read", file)
    except (ValueError, np.linalg.LinAlgError, OverflowError) as exc:
        report.error("SDF_INVALID", f"invalid numeric content: {exc}", file)
    errors = report.errors
    if errors or model is None:
        if not errors:
            errors = [Diagnostic("SDF_INVALID", "the document could not be read", file, None)]
        raise ModelError(errors)
    model.warnings.extend(report.warnings)
    return model

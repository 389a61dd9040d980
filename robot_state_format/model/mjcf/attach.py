"""``<attach model body prefix>``: a body of another MJCF model placed here, as MuJoCo 4.0 attaches it.

``<asset><model name="m" file="gripper.xml"/></asset>`` names a model file (relative to the main file's
folder); ``<attach model="m" body="hand" prefix="g_"/>`` in a body (or frame, or the world body) puts
the body ``hand`` of that model, with everything below it, at the attach point: its own pose, joints,
sites and geoms as that model reads them (its own ``<compiler>`` angle unit and ``eulerseq``, its own
default classes, its own mesh assets), and every name in it prefixed with ``prefix`` (unnamed elements
stay unnamed). Without ``body`` the whole model is attached: everything in its ``<worldbody>`` (bodies,
sites, geoms) placed at the attach point as in a ``<frame>``, prefixed the same way. An attached model may
attach others; a model attaching itself (directly or not) is
refused, and so is a body the model does not have. The attached elements count against
:data:`~robot_state_format.limits.MAX_XML_ELEMENTS`, the model files against
:data:`~robot_state_format.limits.MAX_SDF_INCLUDES`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model import access
from robot_state_format.model.mjcf.asset_files import check_asset_files
from robot_state_format.model.mjcf.document import Document, load_document
from robot_state_format.model.mjcf.mass import check_moving_mass
from robot_state_format.model.mjcf.replicate import ATTACH_SUFFIX
from robot_state_format.model.mjcf.schema_check import check_attributes
from robot_state_format.model.xml import describe

__all__ = ["Attached", "Attacher"]


@dataclass
class Attached:
    """The sub-model's prepared document and a renamed copy of the body to attach."""

    doc: Document
    body: etree._Element


@dataclass
class Attacher:
    """The model files loaded for ``<attach>`` (by path), shared by a whole read."""

    main_dir: Path
    loaded: dict[Path, Document] = field(default_factory=dict)
    stack: list[Path] = field(default_factory=list)
    elements: int = 0

    def _model_file(self, doc: Document, el: etree._Element, name: str) -> Path | None:
        for asset in doc.root.iterchildren("asset"):
            for m in asset.iterchildren("model"):
                if m.get("name") == name or (m.get("name") is None and Path(m.get("file") or "").stem == name):
                    file = m.get("file")
                    if file is None:
                        doc.report(m, "MJCF_ATTACH", "<model> needs a file attribute")
                        return None
                    access.check_reference(file, doc.file, m.sourceline)  # a network description: before any lookup
                    base = Path(doc.file).parent if doc.file != "<string>" else self.main_dir
                    found: Path = (base / file).resolve()
                    return found
        doc.report(el, "MJCF_ATTACH", f"unknown model {name!r} in <attach> (no <asset><model name={name!r}>)")
        return None

    def _document(self, doc: Document, el: etree._Element, path: Path) -> Document | None:
        if path in self.stack:
            doc.report(el, "MJCF_ATTACH", f"model file {str(path)!r} attaches itself")
            return None
        found = self.loaded.get(path)
        if found is not None:
            return found
        if len(self.loaded) >= limits.MAX_SDF_INCLUDES:
            doc.report(el, "MJCF_ATTACH", f"more than {limits.MAX_SDF_INCLUDES} attached model files "
                       "(RSF_MAX_SDF_INCLUDES)")
            return None
        try:
            sub = load_document(access.read_included(path, uri=str(path), referrer=doc.file, line=el.sourceline),
                                str(path))
        except (access.FileRefused, access.ExpansionTooLarge):
            raise
        except OSError as exc:
            doc.report(el, "MJCF_ATTACH", f"cannot read attached model {str(path)!r}: {exc.strerror or exc}")
            return None
        except ModelError as exc:
            doc.diagnostics.extend(exc.diagnostics)
            return None
        check_attributes(sub)
        check_asset_files(sub)
        doc.diagnostics.extend(sub.diagnostics)
        sub.diagnostics = doc.diagnostics  # one list of problems for the whole read
        self.loaded[path] = sub
        return sub

    def resolve(self, doc: Document, el: etree._Element) -> Attached | None:
        """The body ``el`` (an ``<attach>``) attaches, renamed; None after a report."""
        model, body, prefix = el.get("model"), el.get("body"), el.get("prefix") or ""
        suffix = el.get(ATTACH_SUFFIX) or ""
        if model is None:
            doc.report(el, "MJCF_ATTACH", "<attach> needs a model attribute")
            return None
        path = self._model_file(doc, el, model)
        sub = self._document(doc, el, path) if path is not None else None
        if sub is None or path is None:
            return None
        if body is None:  # the whole model: its world body's content in a frame here (MuJoCo 4.0)
            part = etree.Element("frame")
            for wb in sub.root.iterchildren("worldbody"):
                part.extend(copy.deepcopy(c) for c in wb)
        else:
            found = [b for wb in sub.root.iterchildren("worldbody") for b in wb.iter("body") if b.get("name") == body]
            if not found:
                doc.report(el, "MJCF_ATTACH", f"model {model!r} has no body named {body!r}")
                return None
            part = copy.deepcopy(found[0])
        size = sum(1 for _ in part.iter())
        self.elements += size
        if self.elements > limits.MAX_XML_ELEMENTS:
            raise ModelError(Diagnostic(
                "MJCF_TOO_LARGE", f"<attach> would make the model hold {self.elements} elements, more than "
                f"{limits.MAX_XML_ELEMENTS} (RSF_MAX_XML_ELEMENTS)", doc.file_of(el), el.sourceline, describe(el)))
        for node in part.iter():
            if isinstance(node.tag, str) and node.get("name") is not None:
                node.set("name", prefix + str(node.get("name")) + suffix)
        sub.files[part] = str(path)
        check_moving_mass(sub, part)
        self.stack.append(path)
        return Attached(sub, part)

    def done(self) -> None:
        """The attached body has been walked: its model may be attached again."""
        self.stack.pop()

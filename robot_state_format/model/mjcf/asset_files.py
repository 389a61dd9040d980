"""The files an MJCF model's assets name must exist, as MuJoCo refuses a model whose asset file it cannot
open ("Error opening file"), used or not.

Looked up as MuJoCo 4.0 looks them up (measured, ``test/model/mjcf/test_mjcf_asset_files.py``): a relative ``file`` of
a ``<mesh>``, ``<hfield>`` or ``<skin>`` under ``<compiler meshdir>`` (else ``assetdir``), of a
``<texture>`` (``file`` and the six cube-face files) under ``texturedir`` (else ``assetdir``), those
directories relative to the main file's folder; without them, beside the file that holds the asset (an
included file's folder), else beside the main file (Meta-World's included dependency files name textures
relative to the main file). Only a document read from a file is checked: a model given as text (a string,
or a description received over the network) has no folder, and its assets are not looked up, so a peer
cannot learn which files exist on the node's machine. The reader reads no asset file, it only checks that
each is there.
"""

from __future__ import annotations

from pathlib import Path

from robot_state_format.model.mjcf.document import Document

__all__ = ["check_asset_files"]

_MESHLIKE = frozenset({"mesh", "hfield", "skin"})
_TEXTURE_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")


def _dirs(doc: Document, base: Path) -> tuple[Path | None, Path | None]:
    mesh: str | None = None
    texture: str | None = None
    asset: str | None = None
    for comp in doc.root.iterchildren("compiler"):
        mesh = comp.get("meshdir", mesh)
        texture = comp.get("texturedir", texture)
        asset = comp.get("assetdir", asset)
    meshdir, texturedir = (mesh if mesh is not None else asset), (texture if texture is not None else asset)
    return (base / meshdir if meshdir is not None else None), (base / texturedir if texturedir is not None else None)


def check_asset_files(doc: Document) -> None:
    """Report every asset file that is not there (``MJCF_MISSING_FILE``, at the asset element)."""
    if doc.is_text:
        return
    meshdir, texturedir = _dirs(doc, Path(doc.file).parent)
    for assets in doc.root.iterchildren("asset"):
        for el in assets:
            if el.tag in _MESHLIKE:
                attrs: tuple[str, ...] = ("file",)
                folder = meshdir
            elif el.tag == "texture":
                attrs, folder = _TEXTURE_FILES, texturedir
            else:
                continue
            for attr in attrs:
                name = el.get(attr)
                if not name:
                    continue
                path = Path(name)
                if not path.is_absolute():
                    if folder is not None:
                        path = folder / path
                    elif not (Path(doc.file_of(el)).parent / path).is_file():
                        path = Path(doc.file).parent / path
                    else:
                        path = Path(doc.file_of(el)).parent / path
                if not path.is_file():
                    doc.report(el, "MJCF_MISSING_FILE", f"cannot open {el.tag} file {name!r} ({path}): MuJoCo "
                               "refuses a model whose asset file is missing")

"""Which files a robot description may open, and how much all it expands to may hold together.

Two pieces of state follow one read of a description through every reader (a :class:`ContextVar`, so
each thread and each read has its own):

* **The origin.** A description *text* received as a node parameter or on a topic comes from whoever
  is on the DDS domain (:func:`network_description`). Its references may open only ``package://`` files
  of packages on the node's package path (``AMENT_PREFIX_PATH``, ``ROS_PACKAGE_PATH``), the real path
  (symlinks and ``..`` resolved) inside that package's directory; a file opened so may reference files
  by relative path inside the same package. ``file://``, ``model://``, absolute and relative paths of
  the text itself are refused before anything is looked up (no existence probe). ``any_file`` (the
  node parameter ``description_files:=any``) lifts this. Diagnostics of such a read quote nothing
  read from a file (:func:`withhold`). A file the user names (command line, ``model_file``) has no
  network origin: its references open what they name, as before.
* **The budget** (:func:`expanded_document`): bytes, XML elements and links/bodies of the main
  document and every file it includes or adds, counted together and refused at the first file past
  a bound (``RSF_MAX_EXPANDED_BYTES``, ``RSF_MAX_EXPANDED_ELEMENTS``, ``RSF_MAX_LINKS``).

Readers call :func:`check_reference` with a reference as written (before resolving it) and
:func:`read_included` instead of reading an included file themselves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, DiagnosticError, ModelError
from robot_state_format.limits import read_input_file
from robot_state_format.model.packages import find_package

__all__ = ["ExpansionTooLarge", "FileRefused", "check_path", "check_reference", "count_bytes", "count_tree",
           "expanded_document", "network_description", "package_file", "read_included", "uncounted", "withhold"]

PACKAGE = "package://"
REFUSED = "MODEL_FILE_REFUSED"
TOO_LARGE = "MODEL_EXPANSION_TOO_LARGE"
_LINK_TAGS = ("link", "body")  # URDF and SDFormat links, MJCF bodies
_LINK_START = re.compile(rb"<(?:link|body)[\s/>]")
WIDEN_HINT = ("start the node with description_files:=any to let a description text open any file "
              "(a risk: see docs/state_publisher.md)")


class FileRefused(ModelError):
    """A reference a description received over the network may not open (``MODEL_FILE_REFUSED``)."""


class ExpansionTooLarge(ModelError):
    """The main document and its included files together are past a bound (``MODEL_EXPANSION_TOO_LARGE``)."""


@dataclass
class _Budget:
    bytes: int = 0
    elements: int = 0
    links: int = 0
    counting: bool = True
    exceeded: ExpansionTooLarge | None = None


@dataclass
class _Network:
    text_file: str
    text: str
    any_file: bool
    widen: str  # how a user lets the text open more, in a refusal
    roots: dict[str, str] = field(default_factory=dict)  # a file opened (as given and real) -> its package root
    aliases: dict[str, set[str]] = field(default_factory=dict)  # a package root -> its directory as given
    files_read: list[str] = field(default_factory=list)


_BUDGET: ContextVar[_Budget | None] = ContextVar("rsf_expansion_budget", default=None)
_NETWORK: ContextVar[_Network | None] = ContextVar("rsf_description_origin", default=None)


# ---- the budget -------------------------------------------------------------------------------------
@contextmanager
def expanded_document() -> Iterator[bool]:
    """Count what the reads inside share (a new budget unless one is already open); yields True for
    the outermost (which should count its own document's bytes)."""
    if _BUDGET.get() is not None:
        yield False
        return
    token = _BUDGET.set(_Budget())
    try:
        yield True
    finally:
        _BUDGET.reset(token)


@contextmanager
def uncounted() -> Iterator[None]:
    """A second parse of a document already counted (nothing inside adds to the budget)."""
    budget = _BUDGET.get()
    if budget is None or not budget.counting:
        yield
        return
    budget.counting = False
    try:
        yield
    finally:
        budget.counting = True


def _over(budget: _Budget, what: str, bound: int, variable: str, file: str, line: int | None) -> None:
    budget.exceeded = ExpansionTooLarge(Diagnostic(
        TOO_LARGE, f"the description with the files it includes holds more than {bound} {what} "
        f"({variable}); not read further", file, line))
    raise budget.exceeded


def count_bytes(n: int, file: str, line: int | None = None) -> None:
    """Add a document's ``n`` bytes; raise :class:`ExpansionTooLarge` past ``RSF_MAX_EXPANDED_BYTES``."""
    budget = _BUDGET.get()
    if budget is None or not budget.counting:
        return
    budget.bytes += n
    if budget.bytes > limits.MAX_EXPANDED_BYTES:
        _over(budget, "bytes", limits.MAX_EXPANDED_BYTES, "RSF_MAX_EXPANDED_BYTES", file, line)


def count_tree(root: etree._Element, file: str) -> None:
    """Add a parsed document's elements and links/bodies (``<link>``, ``<body>``)."""
    budget = _BUDGET.get()
    if budget is None or not budget.counting:
        return
    elements = links = 0
    for el in root.iter(etree.Element):
        elements += 1
        if el.tag in _LINK_TAGS:
            links += 1
    budget.elements += elements
    budget.links += links
    if budget.elements > limits.MAX_EXPANDED_ELEMENTS:
        _over(budget, "XML elements", limits.MAX_EXPANDED_ELEMENTS, "RSF_MAX_EXPANDED_ELEMENTS", file, None)
    if budget.links > limits.MAX_LINKS:
        _over(budget, "links/bodies", limits.MAX_LINKS, "RSF_MAX_LINKS", file, None)


# ---- the origin -------------------------------------------------------------------------------------
@contextmanager
def network_description(text: str, file: str, *, any_file: bool = False, widen: str = WIDEN_HINT) -> Iterator[None]:
    """Read ``text`` (named ``file``, e.g. ``<robot_description>``) as received from the network: file
    references restricted (unless ``any_file``), diagnostics raised out of the block withheld
    (:func:`withhold`). Warnings of a model read inside must be passed through :func:`withhold` too.
    ``widen`` ends a refusal: how the reader's user lets a text open more (a node's parameter)."""
    token = _NETWORK.set(_Network(file, text, any_file, widen))
    try:
        yield
    except DiagnosticError as exc:
        raise type(exc)(withhold(exc.diagnostics)) from None
    finally:
        _NETWORK.reset(token)


def _is_text(referrer: str, net: _Network) -> bool:
    return referrer == net.text_file or referrer.startswith("<")


def _refuse(uri: str, referrer: str, line: int | None, net: _Network, why: str) -> FileRefused:
    what = f"{uri!r}" if _is_text(referrer, net) else "a reference in an included file"
    return FileRefused(Diagnostic(
        REFUSED, f"{what}: {why}; a description received as a parameter or on a topic may open only "
        f"package:// files inside packages on the package path; {net.widen}", referrer, line))


@dataclass(frozen=True)
class _PackageFile:
    root: str  # the real path of the package's directory
    real: str  # the real path of the file
    share: str  # the package's directory as the package path gives it (symbolic links not resolved)


def _package_root(uri: str) -> _PackageFile | None:
    """``package://pkg/rel`` -> the real paths of pkg's directory and of the file; None for no such package."""
    name, _, rel = uri[len(PACKAGE):].partition("/")
    share = find_package(name) if name else None
    if share is None:
        return None
    root = os.path.realpath(share)
    lexical = os.path.normpath(os.path.join(root, rel))
    if not _inside(lexical, root):  # ".." out of it, or an absolute rest ("pkg//etc/x"): never looked up
        return _PackageFile(root, lexical, str(share))
    return _PackageFile(root, os.path.realpath(lexical), str(share))  # symbolic links: only the package's own


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(os.path.join(root, ""))


def package_file(uri: str) -> str | None:
    """The real path of a ``package://`` URI whose package is on the node's package path and which stays
    inside that package's directory (symbolic links and ``..`` resolved); None for any other reference.
    What a description received over the network may name for a file read after it was read (the live
    view's meshes)."""
    uri = uri.strip()
    if not uri.startswith(PACKAGE):
        return None
    found = _package_root(uri)
    return found.real if found is not None and _inside(found.real, found.root) else None


def check_reference(uri: str, referrer: str, line: int | None = None) -> None:
    """Before ``uri`` (as written in the document ``referrer``) is resolved or looked up: raise
    :class:`FileRefused` when a network description may not open it. Nothing is probed for a
    reference refused here, so the answer tells nothing about the node's files."""
    net = _NETWORK.get()
    if net is None or net.any_file:
        return
    uri = uri.strip()
    if uri.startswith(PACKAGE):
        found = _package_root(uri)
        if found is None:
            raise _refuse(uri, referrer, line, net, "no such package on the node's package path")
        net.aliases.setdefault(found.root, set()).add(found.share)
        if not _inside(found.real, found.root):
            raise _refuse(uri, referrer, line, net, "it leads out of its package (.. or a symbolic link)")
        return
    if _is_text(referrer, net):
        raise _refuse(uri, referrer, line, net, "not a package:// URI")
    if "://" in uri or os.path.isabs(uri):
        raise _refuse(uri, referrer, line, net, "not a package:// URI or a path relative to the including file")


def check_path(path: Path | str, *, uri: str, referrer: str, line: int | None = None) -> str:
    """The real path of ``path`` (what ``referrer`` references as ``uri``, resolved by a reader) when a
    network description may open it: inside the package the ``package://`` URI names, or for a relative
    reference inside the package of the file referencing it; else :class:`FileRefused`."""
    net = _NETWORK.get()
    if net is None or net.any_file:
        return os.path.realpath(path)
    if uri.strip().startswith(PACKAGE):
        found = _package_root(uri.strip())
        root = found.root if found is not None else None
        if found is not None:
            net.aliases.setdefault(found.root, set()).add(found.share)
    else:
        root = net.roots.get(referrer) or net.roots.get(os.path.realpath(referrer))
    if root is None:
        raise _refuse(uri, referrer, line, net, "no such package on the node's package path"
                      if uri.strip().startswith(PACKAGE) else "not a package:// URI")
    # ".." out of the package (its directory as resolved or as given): refused before anything is looked up
    lexical = os.path.normpath(os.path.abspath(path))
    if not any(_inside(lexical, top) for top in (root, *net.aliases.get(root, ()))):
        raise _refuse(uri, referrer, line, net, "it leads out of its package (.. or a symbolic link)")
    real = os.path.realpath(lexical)
    if not _inside(real, root):
        raise _refuse(uri, referrer, line, net, "it leads out of its package (.. or a symbolic link)")
    net.roots[str(path)] = net.roots[real] = root
    return real


def read_included(path: Path | str, *, uri: str, referrer: str, line: int | None = None) -> bytes:
    """The bytes of the file ``path`` that ``referrer`` references as ``uri``, as
    :func:`~robot_state_format.limits.read_input_file` reads them (its :class:`OSError`\\ s unchanged),
    counted in the budget; :class:`FileRefused` for a network description's file outside its package
    (:func:`check_path`), :class:`ExpansionTooLarge` once the budget is spent."""
    budget = _BUDGET.get()
    if budget is not None and budget.exceeded is not None:
        raise budget.exceeded
    net = _NETWORK.get()
    target = str(path)
    if net is not None:
        real = check_path(path, uri=uri, referrer=referrer, line=line)
        if not net.any_file:
            target = real  # what was checked is what is read
        net.files_read.append(str(path))
    data = read_input_file(target)
    count_bytes(len(data), str(path))
    if budget is not None and budget.counting and budget.links + len(_LINK_START.findall(data)) > limits.MAX_LINKS:
        # refused before a tree is built: what the file adds is known from its bytes (a tag in a
        # comment counts too, a link more than the parse would count)
        _over(budget, "links/bodies", limits.MAX_LINKS, "RSF_MAX_LINKS", str(path), None)
    return data


def note_files_read(what: str) -> None:
    """Tell the network read that content of files reached it another way (a confined xacro expansion)."""
    net = _NETWORK.get()
    if net is not None:
        net.files_read.append(what)


# ---- diagnostics ------------------------------------------------------------------------------------
_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")
_OWN = frozenset({REFUSED, TOO_LARGE, "XACRO_LIMIT", "XACRO_TOO_LARGE", "XML_TOO_LARGE", "XML_TOO_MANY_ELEMENTS",
                  "SDF_TOO_MANY_INCLUDES"})
_CROSS_FILE = frozenset({"DMD_MODEL_FILE"})  # placed in the text, worded from the file it adds
WITHHELD = "(message withheld: a description received over the network never quotes a file's content)"


def _quotes_only_text(message: str, text: str) -> bool:
    return all((m.group(1) if m.group(1) is not None else m.group(2)) in text for m in _QUOTED.finditer(message))


def withhold(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Under a network read: a diagnostic about a file (not the text itself) keeps its code, file and
    line, never its message or element (they may quote the file); once files were read, so does a
    diagnostic in the text that quotes anything the text does not hold. Outside one: unchanged."""
    net = _NETWORK.get()
    if net is None:
        return diagnostics
    out = []
    for d in diagnostics:
        if d.file == net.text_file:
            keep = d.code in _OWN or not net.files_read or (
                d.code not in _CROSS_FILE and _quotes_only_text(d.message, net.text))
            out.append(d if keep else replace(d, message=WITHHELD))
        else:  # the project's own words about a file stay; its element (tag and name) never
            out.append(replace(d, element=None) if d.code in _OWN else replace(d, message=WITHHELD, element=None))
    return out

"""Extension elements: children of ``<world_state>`` in a foreign XML namespace (docs/usdf-spec.md §13).

USDF itself uses no namespace.  An element in any other namespace is an extension: readers that
do not know it ignore it, and this package keeps it verbatim (:class:`ExtensionElement`) so a
document read and written again keeps it.  The one extension this package defines is the
simulator state (:mod:`robot_state_format.usdf.simulator_state`).
"""

from __future__ import annotations

from lxml import etree

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.model.xml import safe_parser
from robot_state_format.usdf.types import ExtensionElement


def extension_element(el: etree._Element) -> ExtensionElement:
    """The extension element ``el`` (tag ``{namespace}local``) as kept by the reader."""
    qname = etree.QName(el)
    xml = etree.tostring(el, encoding="unicode", with_tail=False)
    return ExtensionElement(qname.namespace or "", qname.localname, xml)


def check_extension(ext: ExtensionElement) -> str:
    """The XML text of ``ext`` after checking it is one well-formed element in its namespace."""
    try:
        el = etree.fromstring(ext.xml.encode("utf-8"), safe_parser())
    except (etree.LxmlError, ValueError) as exc:
        raise UsdfError(Diagnostic("USDF_EXTENSION", f"extension <{ext.tag}> is not well-formed XML: {exc}",
                                   "<output>", None, ext.tag)) from None
    qname = etree.QName(el)
    if not qname.namespace or qname.namespace != ext.namespace or qname.localname != ext.tag:
        raise UsdfError(Diagnostic("USDF_EXTENSION", f"extension element {{{ext.namespace}}}{ext.tag} holds "
                                   f"<{el.tag}>: an extension must be in its own (non-empty) namespace",
                                   "<output>", None, ext.tag))
    return ext.xml

"""ROS 2 message definitions (``ros2msg`` schema text) and their type hashes (RIHS01), no rclpy.

* :func:`definition` gives the full text rosbag2 writes as an MCAP schema: the type's ``.msg`` file
  followed by each dependency as ``"\\n" + "=" * 80 + "\\nMSG: pkg/Type\\n" + text`` (dependencies in
  sorted order, depth first, each once), read from the ``share/<pkg>/msg/`` directories of the
  installed interface packages (``AMENT_PREFIX_PATH`` and this Python's prefix); the few types the
  project records have built-in texts used when no ``.msg`` file is installed.
* :func:`type_hash` computes the REP-2011 type hash (``RIHS01_<sha256>``) from such a full text: the
  type description (fields with type ids, capacities and nested type names; constants, defaults
  and comments do not count) serialised as rosidl does and hashed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.lazy_modules import lazy_module
from robot_state_format.limits import read_input_file

hashlib = lazy_module("hashlib")  # OpenSSL's libcrypto: ~3.5 MB of a node's memory, loaded when a digest is made

STRING_TYPE = "std_msgs/msg/String"
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
CLOCK_TYPE = "rosgraph_msgs/msg/Clock"
TF_TYPE = "tf2_msgs/msg/TFMessage"

SEP = "=" * 80 + "\n"


class MessageDefinitionError(RobotStateFormatError):
    """A message definition cannot be found or parsed (names the type and the line)."""


def _section(name: str, text: str) -> str:
    return "\n" + SEP + f"MSG: {name}\n" + text


_TIME = "int32 sec\nuint32 nanosec\n"
_HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"
_TRANSFORM = "Vector3 translation\nQuaternion rotation\n"
_QUATERNION = "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"
_VECTOR3 = "float64 x\nfloat64 y\nfloat64 z\n"

BUILTIN: dict[str, str] = {
    STRING_TYPE: "string data\n",
    JOINT_STATE_TYPE: (
        "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
        + _section("std_msgs/Header", _HEADER) + _section("builtin_interfaces/Time", _TIME)),
    CLOCK_TYPE: "builtin_interfaces/Time clock\n" + _section("builtin_interfaces/Time", _TIME),
    TF_TYPE: (
        "geometry_msgs/TransformStamped[] transforms\n"
        + _section("geometry_msgs/TransformStamped", "std_msgs/Header header\nstring child_frame_id\n"
                   "Transform transform\n")
        + _section("geometry_msgs/Transform", _TRANSFORM)
        + _section("geometry_msgs/Quaternion", _QUATERNION)
        + _section("geometry_msgs/Vector3", _VECTOR3)
        + _section("std_msgs/Header", _HEADER)
        + _section("builtin_interfaces/Time", _TIME)),
}
"""Full ros2msg texts of the types the project records, for machines without their ``.msg`` files."""

PRIMITIVE_IDS = {"int8": 2, "uint8": 3, "int16": 4, "uint16": 5, "int32": 6, "uint32": 7, "int64": 8,
                 "uint64": 9, "float32": 10, "float64": 11, "char": 3, "bool": 15, "byte": 16,
                 "string": 17, "wstring": 18}
NESTED_ID = 1
BOUNDED_STRING_IDS = {"string": 21, "wstring": 22}
ARRAY, BOUNDED_SEQUENCE, UNBOUNDED_SEQUENCE = 48, 96, 144

_TYPE_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*(?:/[A-Za-z][A-Za-z0-9_]*){0,2})(?:<=(\d+))?(?:\[(<=)?(\d*)\])?$")
_NAME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)/(?:(msg|srv|action)/)?([A-Za-z][A-Za-z0-9_]*)$")


def split_type(type_name: str) -> tuple[str, str, str]:
    """``pkg/msg/Type`` or ``pkg/Type`` → ``(pkg, "msg", Type)``."""
    m = _NAME_RE.match(type_name)
    if m is None:
        raise MessageDefinitionError(f"{type_name!r} is not a message type name (pkg/msg/Type)")
    return m.group(1), m.group(2) or "msg", m.group(3)


def full_name(type_name: str) -> str:
    pkg, ns, name = split_type(type_name)
    return f"{pkg}/{ns}/{name}"


def share_dirs() -> list[Path]:
    """``share`` directories searched for ``.msg`` files: ``AMENT_PREFIX_PATH``, then this Python's prefix."""
    out: list[Path] = []
    for prefix in [*os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep), sys.prefix]:
        if prefix and (Path(prefix) / "share").is_dir() and Path(prefix) / "share" not in out:
            out.append(Path(prefix) / "share")
    return out


def _msg_file(pkg: str, ns: str, name: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        p = d / pkg / ns / f"{name}.msg"
        if p.is_file():
            return p
    return None


def _field_types(text: str) -> list[str]:
    """The type token of every field line (constants included, as rosbag2 collects dependencies)."""
    out = []
    for line in text.splitlines():
        code = line.split("#", 1)[0].strip()
        if code:
            out.append(re.sub(r"(<=\d+)?\[.*$", "", code.split()[0]).split("<=")[0])
    return out


def definition_from_files(type_name: str, dirs: list[Path] | None = None) -> str | None:
    """The full text composed from installed ``.msg`` files as rosbag2 does (None: a file is missing)."""
    dirs = share_dirs() if dirs is None else dirs
    seen: set[str] = set()

    def text_of(pkg: str, ns: str, name: str, depth: int) -> str | None:
        if depth > 50:
            raise MessageDefinitionError(f"{type_name}: message definitions nest deeper than 50")
        path = _msg_file(pkg, ns, name, dirs)
        if path is None:
            return None
        text = read_input_file(path).decode("utf-8", "replace")  # the size-checked gate (never a FIFO)
        deps = set()
        for t in _field_types(text):
            if t in PRIMITIVE_IDS:
                continue
            deps.add(t if "/" in t else f"{pkg}/{t}")
        out = text
        for dep in sorted(deps):
            if dep in seen:
                continue
            seen.add(dep)
            dpkg, dns, dname = split_type(dep)
            sub = text_of(dpkg, dns, dname, depth + 1)
            if sub is None:
                return None
            out += "\n" + SEP + f"MSG: {dep}\n" + sub
        return out

    pkg, ns, name = split_type(type_name)
    return text_of(pkg, ns, name, 0)


@lru_cache(maxsize=256)
def definition(type_name: str) -> str:
    """The full ros2msg text of ``type_name`` (installed ``.msg`` files, else built in)."""
    canonical = full_name(type_name)
    try:
        text = definition_from_files(canonical)
    except (OSError, UnicodeDecodeError):
        text = None
    if text is None:
        text = BUILTIN.get(canonical)
    if text is None:
        raise MessageDefinitionError(f"no message definition for {canonical}: no .msg file under "
                                     f"{', '.join(map(str, share_dirs())) or '(no share directory)'}")
    return text


# -- type description and hash (REP 2011) ---------------------------------------------------------
def _sections(root: str, text: str) -> dict[str, str]:
    """Full text → ``{pkg/msg/Type: its own text}``."""
    parts = re.split(r"(?:^|\n)=+\n", text)
    out = {full_name(root): parts[0]}
    for part in parts[1:]:
        head, _, body = part.partition("\n")
        if not head.startswith("MSG: "):
            raise MessageDefinitionError(f"{root}: a section of its definition starts with {head!r}, not 'MSG: '")
        out[full_name(head[5:].strip())] = body
    return out


def _field(pkg: str, type_token: str, name: str, where: str) -> dict[str, Any]:
    m = _TYPE_RE.match(type_token)
    if m is None:
        raise MessageDefinitionError(f"{where}: field type {type_token!r} not understood")
    base, str_bound, bounded, size = m.groups()
    nested = ""
    string_capacity = 0
    if base in PRIMITIVE_IDS:
        tid = PRIMITIVE_IDS[base]
        if str_bound is not None:
            if base not in BOUNDED_STRING_IDS:
                raise MessageDefinitionError(f"{where}: only strings take a bound, not {base}")
            tid, string_capacity = BOUNDED_STRING_IDS[base], int(str_bound)
    else:
        tid = NESTED_ID
        nested = full_name(base if "/" in base else f"{pkg}/{base}")
    capacity = 0
    if m.group(0).endswith("]"):
        if size == "":
            tid += UNBOUNDED_SEQUENCE
        elif bounded:
            tid, capacity = tid + BOUNDED_SEQUENCE, int(size)
        else:
            tid, capacity = tid + ARRAY, int(size)
    return {"name": name, "type": {"type_id": tid, "capacity": capacity, "string_capacity": string_capacity,
                                   "nested_type_name": nested}}


def _individual(type_name: str, text: str) -> dict[str, Any]:
    pkg = type_name.split("/", 1)[0]
    fields = []
    for lineno, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        tokens = code.split()
        if len(tokens) < 2:
            raise MessageDefinitionError(f"{type_name}:{lineno}: expected 'type name', got {code!r}")
        if "=" in tokens[1] or (len(tokens) > 2 and tokens[2].startswith("=")):
            continue  # a constant: not part of the type description
        fields.append(_field(pkg, tokens[0], tokens[1], f"{type_name}:{lineno}"))
    if not fields:  # as rosidl: an empty structure gets one placeholder member
        fields.append({"name": "structure_needs_at_least_one_member",
                       "type": {"type_id": 3, "capacity": 0, "string_capacity": 0, "nested_type_name": ""}})
    return {"type_name": type_name, "fields": fields}


def type_description(type_name: str, text: str) -> dict[str, Any]:
    """The hashed part of ``type_description_interfaces/TypeDescription`` for a full ros2msg text."""
    root = full_name(type_name)
    types = {name: _individual(name, body) for name, body in _sections(root, text).items()}
    refs: set[str] = set()
    queue = [f["type"]["nested_type_name"] for f in types[root]["fields"] if f["type"]["nested_type_name"]]
    while queue:
        name = queue.pop()
        if name in refs:
            continue
        if name not in types:
            raise MessageDefinitionError(f"{root}: its definition lacks the type {name} it uses")
        refs.add(name)
        queue += [f["type"]["nested_type_name"] for f in types[name]["fields"] if f["type"]["nested_type_name"]]
    return {"type_description": types[root], "referenced_type_descriptions": [types[n] for n in sorted(refs)]}


def type_hash(type_name: str, text: str | None = None) -> str:
    """``RIHS01_<sha256 hex>`` of ``type_name`` (``text``: its full ros2msg text, default :func:`definition`)."""
    desc = type_description(type_name, definition(type_name) if text is None else text)
    data = json.dumps(desc, ensure_ascii=True, allow_nan=False, separators=(", ", ": "), sort_keys=False)
    digest: str = hashlib.sha256(data.encode("utf-8")).hexdigest()
    return "RIHS01_" + digest

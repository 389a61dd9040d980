"""The shape of the package, read from its source (docs/ARCHITECTURE.md).

- the import contracts of ``.importlinter`` hold (layers in one direction, rclpy only in ros/, no node imports
  another node), checked by import-linter itself;
- no import cycle between any two modules (grimp's graph of the package, function-level imports included);
- at most a dozen function-local imports, each of an optional dependency;
- no module over 600 lines;
- the package root declares its public API in ``__all__``;
- the rooms (the package's subpackages and top-level modules) import each other exactly as the table of
  docs/ARCHITECTURE.md says.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT, TEST_DIR

ROOT = REPO_ROOT
PACKAGE = ROOT / "robot_state_format"
MAX_LINES = 600
MAX_LOCAL_IMPORTS = 12
# Optional dependencies: imported where they are first needed, so the package works (and starts fast) without them.
OPTIONAL = {"numba", "mujoco", "pydrake", "pinocchio", "matplotlib", "tf2_ros", "rosbags"}

needs_importlinter = pytest.mark.skipif(importlib.util.find_spec("importlinter") is None,
                                        reason="import-linter is not installed (requirements/test.txt)")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _function_local_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import statement inside a function body."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import):
                found.extend((child.lineno, a.name) for a in child.names)
            elif in_function and isinstance(child, ast.ImportFrom):
                found.append((child.lineno, "." * child.level + (child.module or "")))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


@needs_importlinter
def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache", "--config", str(ROOT / ".importlinter")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_strongly_connected_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _strongly_connected(graph) == [["a", "b", "c"], ["e"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


@needs_importlinter
def test_no_import_cycle_between_modules() -> None:
    import grimp

    g = grimp.build_graph("robot_state_format", cache_dir=None)
    graph = {m: {i for i in g.find_modules_directly_imported_by(m)
                 # a package importing its own submodules (its __init__ re-exporting them) is not a cycle
                 if not i.startswith(m + ".")}
             for m in g.modules}
    cycles = _strongly_connected(graph)
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_function_local_imports_are_few_and_optional() -> None:
    local = {str(p.relative_to(ROOT)): _function_local_imports(p) for p in _modules()}
    flat = [(f, line, mod) for f, items in local.items() for line, mod in items]
    not_optional = [(f, line, mod) for f, line, mod in flat if mod.split(".")[0] not in OPTIONAL]
    assert not_optional == [], "function-local imports of required modules:\n" + "\n".join(
        f"{f}:{line}: {mod}" for f, line, mod in not_optional)
    assert len(flat) <= MAX_LOCAL_IMPORTS, "\n".join(f"{f}:{line}: {mod}" for f, line, mod in flat)


def test_local_import_counter_sees_nested_functions(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("import os\n\ndef f():\n    import json\n    def g():\n        from . import x\n"
                   "class C:\n    def m(self):\n        import numba\n")
    assert _function_local_imports(src) == [(4, "json"), (6, "."), (9, "numba")]


def test_no_module_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_root_declares_its_public_api() -> None:
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    names = [t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)]
    assert "__all__" in names


# The rooms of test/: each folder holding test modules is named for a package directory or module of
# robot_state_format/ at the same path (test/model/sdf/ for model/sdf/, test/ros/state_store/ for
# ros/state_store.py), or is one of these two, which test no one package room.
EXTRA_TEST_ROOMS = {
    "project": "repository-wide checks: static analysis, layers, README, packaging, colcon, rosdep, bench, fuzz",
    "harness": "the test harness itself (test/ros_harness.py, own_process.py, the set-up)",
}


def package_rooms(package: Path) -> set[str]:
    """Every subpackage and module of ``package`` as a path without suffix (``model/sdf``, ``ros/state_store``)."""
    rooms = set()
    for path in package.rglob("*.py"):
        rel = path.relative_to(package)
        if "samples" in rel.parts:
            continue
        rooms.add((rel.parent if path.name == "__init__.py" else rel.with_suffix("")).as_posix())
    return rooms - {"."}


def misplaced_test_modules(test_dir: Path, rooms: set[str]) -> list[str]:
    """Test modules lying directly in ``test_dir`` or in a folder that is not a room; basenames used twice."""
    found, seen = [], {}
    for path in sorted(test_dir.rglob("test_*.py")):
        rel = path.relative_to(test_dir)
        if rel.parts[0] == "fixtures":
            continue
        room = rel.parent.as_posix()
        if room == ".":
            found.append(f"test/{rel}: directly in test/ (move it to the room of what it tests)")
        elif room not in rooms and room not in EXTRA_TEST_ROOMS:
            found.append(f"test/{rel}: test/{room}/ is not named for a package room of robot_state_format/")
        if path.name in seen:  # pytest imports test modules by basename: two of one name collide
            found.append(f"test/{rel}: its basename is taken by test/{seen[path.name]}")
        seen.setdefault(path.name, rel)
    return found


def test_misplaced_test_modules_are_found(tmp_path: Path) -> None:
    for rel in ("test_flat.py", "model/sdf/test_sdf.py", "modle/test_typo.py", "ros/test_ok.py", "cli/test_ok.py",
                "fixtures/sdf/test_data.py", "harness/test_h.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert misplaced_test_modules(tmp_path, {"model", "model/sdf", "ros"}) == [
        "test/cli/test_ok.py: test/cli/ is not named for a package room of robot_state_format/",
        "test/modle/test_typo.py: test/modle/ is not named for a package room of robot_state_format/",
        "test/ros/test_ok.py: its basename is taken by test/cli/test_ok.py",
        "test/test_flat.py: directly in test/ (move it to the room of what it tests)",
    ]


def test_test_modules_live_in_package_rooms() -> None:
    rooms = package_rooms(PACKAGE)
    assert {"model/sdf", "ros/state_store", "cli", "usdf/export", "spatial"} <= rooms
    assert misplaced_test_modules(TEST_DIR, rooms) == []


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
_ROOM_ROW = re.compile(r"^\| `([\w.]+)` \|(.*)\|$")


def _room(module: str) -> str:
    """The room of a module: its top-level subpackage or module (``__init__`` for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _documented_rooms(text: str) -> dict[str, set[str]]:
    """The table between the ``rooms:begin`` and ``rooms:end`` markers: room -> the rooms it imports."""
    assert "<!-- rooms:begin -->" in text and "<!-- rooms:end -->" in text, "no room table"
    block = text.split("<!-- rooms:begin -->", 1)[1].split("<!-- rooms:end -->", 1)[0]
    return {m.group(1): set(re.findall(r"`([\w.]+)`", m.group(2)))
            for line in block.splitlines() if (m := _ROOM_ROW.match(line.strip()))}


def test_documented_rooms_parser_reads_the_table() -> None:
    text = ("x\n<!-- rooms:begin -->\n| room | imports |\n|---|---|\n| `cli` | `model`, `usdf` |\n| `errors` | |\n"
            "<!-- rooms:end -->\n| `ros` | `cli` |\n")
    assert _documented_rooms(text) == {"cli": {"model", "usdf"}, "errors": set()}


@needs_importlinter
def test_rooms_import_each_other_as_documented() -> None:
    import grimp

    g = grimp.build_graph("robot_state_format", cache_dir=None)
    found: dict[str, set[str]] = {}
    for m in g.modules:
        found.setdefault(_room(m), set()).update(
            r for i in g.find_modules_directly_imported_by(m) if (r := _room(i)) != _room(m))
    table = "\n".join(f"| `{r}` | {', '.join(f'`{d}`' for d in sorted(found[r]))} |" for r in sorted(found))
    assert _documented_rooms(ARCHITECTURE.read_text(encoding="utf-8")) == found, (
        "docs/ARCHITECTURE.md's room table is not the code's; the code's:\n" + table)

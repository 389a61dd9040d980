"""The public API at the package root (robot_state_format.__all__) and its documentation, docs/api.md.

* every name of ``__all__`` resolves to the object of its home module and is declared for type checkers;
* every name has a heading in docs/api.md whose section holds a ``python`` example using it;
* every ``python`` block of docs/api.md runs in a fresh namespace; what it prints must equal the ``text``
  block right after it, and its own asserts compare the library with hand-derived values and round trips;
* ``import robot_state_format`` imports neither numpy nor lxml (checked in a fresh interpreter).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import io
import json
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest
from repo_paths import REPO_ROOT

import robot_state_format as rsf

ROOT = REPO_ROOT
API_DOC = ROOT / "docs" / "api.md"
FENCE_RE = re.compile(r"^```(\w*)\n(.*?)^```\n?", re.S | re.M)
NEEDS_RE = re.compile(r"\A# needs: (\w+)\n")


@dataclass
class Example:
    line: int
    section: str  # the heading the block is under
    code: str
    expected: str | None  # the ``text`` block right after it: what the code prints


def examples(text: str) -> list[Example]:
    """The ``python`` blocks of a markdown text, each with its section and the output block after it."""
    out: list[Example] = []
    fences = list(FENCE_RE.finditer(text))
    for i, m in enumerate(fences):
        if m.group(1) != "python":
            continue
        heading = "".join(re.findall(r"^#+ .*$", text[:m.start()], re.M)[-1:])
        expected = None
        if i + 1 < len(fences):
            nxt = fences[i + 1]
            if nxt.group(1) == "text" and not text[m.end():nxt.start()].strip():
                expected = nxt.group(2)
        out.append(Example(text.count("\n", 0, m.start()) + 1, heading, m.group(2), expected))
    return out


def run_example(ex: Example) -> None:
    """Run ``ex`` in a fresh namespace; AssertionError when its output differs from the expected one."""
    namespace: dict[str, object] = {"__name__": "__api_example__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(ex.code, f"{API_DOC.name}:{ex.line}", "exec"), namespace)
    if ex.expected is not None:
        assert out.getvalue() == ex.expected, f"docs/api.md:{ex.line}: printed\n{out.getvalue()}"


EXAMPLES = examples(API_DOC.read_text(encoding="utf-8"))


@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"line{e.line}" for e in EXAMPLES])
def test_documented_example_runs_and_prints_what_the_page_says(ex: Example) -> None:
    needs = NEEDS_RE.match(ex.code)
    if needs and importlib.util.find_spec(needs.group(1)) is None:
        pytest.skip(f"needs {needs.group(1)} (an optional dependency), not installed")
    assert ex.expected is not None or re.search(r"^\s*assert ", ex.code, re.M), \
        f"docs/api.md:{ex.line}: an example checks nothing (no assert, no output block)"
    run_example(ex)


def test_the_example_runner_catches_a_wrong_output_and_a_failing_assert() -> None:
    doc = "## `x`\n\n```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n\n```python\nassert 2 + 2 == 5\n```\n"
    wrong, failing = examples(doc)
    assert (wrong.section, wrong.expected, failing.expected) == ("## `x`", "3\n", None)
    with pytest.raises(AssertionError, match="printed"):
        run_example(wrong)
    with pytest.raises(AssertionError):
        run_example(failing)
    run_example(Example(1, "", "print('ok')\n", "ok\n"))


def test_every_public_name_resolves_to_its_home_object() -> None:
    assert len(set(rsf.__all__)) == len(rsf.__all__)
    for name in rsf.__all__:
        value = getattr(rsf, name)
        if name == "__version__":
            assert re.fullmatch(r"\d+\.\d+\.\d+", value)
            continue
        home = importlib.import_module(rsf._HOME_OF[name])
        assert value is getattr(home, name), name
    assert set(rsf.__all__) <= set(dir(rsf))
    assert set(rsf._HOME_OF) == set(rsf.__all__) - {"__version__"}
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        rsf.no_such_name  # noqa: B018 - the attribute access is the test


def test_type_checkers_see_every_public_name() -> None:
    """The ``if TYPE_CHECKING:`` imports of the root name exactly the names ``__getattr__`` serves, from the
    same modules (mypy reads those; at run time they are never executed)."""
    tree = ast.parse((ROOT / "robot_state_format" / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
                 and n.test.id == "TYPE_CHECKING")
    declared = {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) and n.module != "typing"
                for a in n.names}
    assert declared == rsf._HOME_OF


def test_every_public_name_is_documented_with_an_example() -> None:
    text = API_DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ .*$", text, re.M)
    for name in rsf.__all__:
        sections = [h for h in headings if f"`{name}`" in h]
        if name == "__version__":
            assert re.search(r"\brsf\.__version__\b", EXAMPLES[0].code)
            continue
        assert sections, f"docs/api.md has no heading naming `{name}`"
        used = [e for e in EXAMPLES if e.section in sections and re.search(rf"\b{re.escape(name)}\b", e.code)]
        assert used, f"docs/api.md: no example under {sections[0]!r} uses {name}"


def test_importing_the_package_loads_no_heavy_module() -> None:
    code = ("import json, sys\nimport robot_state_format\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
            "robot_state_format.Stamp\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          check=True)
    at_import, after_use = (set(json.loads(line)) for line in proc.stdout.splitlines())
    assert not at_import & {"numpy", "lxml", "rclpy", "typing"}, at_import
    assert "robot_state_format" in at_import
    # the first use of a name imports its home module (and what that needs), no more
    assert {"robot_state_format"} <= after_use and not after_use & {"numpy", "lxml", "rclpy"}

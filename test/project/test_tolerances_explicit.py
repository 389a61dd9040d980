"""Every tolerance in the tests is written where it is used (docs/testing.md).

``assert_allclose`` compares with ``rtol=1e-7`` unless told otherwise, ``np.allclose``/``np.isclose``
with ``rtol=1e-5, atol=1e-8``, ``pytest.approx`` with ``rel=1e-6, abs=1e-12``: a call that leaves them out
reads stricter than it is (``atol=1e-15`` beside the default rtol checks 1e-7 on unit-scale values).
This scan of test/ fails on any such call: ``assert_allclose`` needs ``rtol``; ``allclose``/``isclose``
need ``rtol`` and ``atol``; ``approx`` needs ``rel`` and ``abs``; ``assert_almost_equal`` and
``assert_array_almost_equal`` need ``decimal`` (given by keyword or position); ``math.isclose`` needs
``rel_tol`` and ``abs_tol``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from repo_paths import TEST_DIR

REQUIRED: dict[str, tuple[tuple[str, int], ...]] = {
    # the function's name -> (keyword, its position among the arguments) of each tolerance it needs
    "assert_allclose": (("rtol", 2),),
    "allclose": (("rtol", 2), ("atol", 3)),
    "isclose": (("rtol", 2), ("atol", 3)),
    "approx": (("rel", 1), ("abs", 2)),
    "assert_almost_equal": (("decimal", 2),),
    "assert_array_almost_equal": (("decimal", 2),),
}
MATH_ISCLOSE = (("rel_tol", -1), ("abs_tol", -1))  # math.isclose: keywords only (rel_tol=1e-9 by default)


def implicit_tolerances(source: str, file: str = "<string>") -> list[str]:
    """``file:line: name() without kw, ...`` for every call of :data:`REQUIRED` leaving a tolerance out."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, file)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in REQUIRED:
            continue
        needed = REQUIRED[name]
        if name == "isclose" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "math":
            needed = MATH_ISCLOSE
        given = {k.arg for k in node.keywords}
        if None in given:  # **kwargs: not readable here
            found.append((node.lineno, f"{file}:{node.lineno}: {name}(**...) hides its tolerances"))
            continue
        missing = [kw for kw, pos in needed if kw not in given and (pos < 0 or len(node.args) <= pos)]
        if missing:
            found.append((node.lineno, f"{file}:{node.lineno}: {name}() without {', '.join(missing)}"))
    return [text for _, text in sorted(found)]


def test_the_scan_sees_what_it_should() -> None:
    text = """
np.testing.assert_allclose(a, b, atol=1e-15)
np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
np.testing.assert_allclose(a, b, 0, 1e-12)
assert np.allclose(a, b, atol=1e-9)
assert np.isclose(a, b, rtol=0, atol=1e-9)
assert x == pytest.approx(1.0)
assert x == pytest.approx(1.0, rel=0, abs=1e-9)
assert x == approx(1.0, 0, 1e-9)
np.testing.assert_array_almost_equal(a, b)
assert np.allclose(a, b, **tolerances)
assert math.isclose(a, b, abs_tol=1e-12)
assert math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
"""
    assert implicit_tolerances(text) == [
        "<string>:2: assert_allclose() without rtol",
        "<string>:5: allclose() without rtol",
        "<string>:7: approx() without rel, abs",
        "<string>:10: assert_array_almost_equal() without decimal",
        "<string>:11: allclose(**...) hides its tolerances",
        "<string>:12: isclose() without rel_tol",
    ]


def test_every_tolerance_in_the_tests_is_explicit() -> None:
    found: list[str] = []
    for path in sorted(TEST_DIR.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        found += implicit_tolerances(path.read_text(encoding="utf-8"), str(path.relative_to(TEST_DIR.parent)))
    assert not found, "tolerances left at their defaults (write rtol=0, atol=...):\n" + "\n".join(found)

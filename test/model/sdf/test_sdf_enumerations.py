"""The value sets libsdformat 12 reads as one of a fixed set (sensor, light and particle emitter types,
force-torque frames, image formats, ...) are its own lists, measured into
``model/sdf/spec/enumerations.json`` by ``conformance/sdf_enums.py``; checked here against ``sdf_ref``
at every declared version from 1.4 (libsdformat converts each document to 1.9 before reading them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.sdf import dom_rules

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from references import run_sdf_ref, sdf_ref_path  # noqa: E402
from sdf_enums import TEMPLATES  # noqa: E402

VERSIONS = ("1.4", "1.5", "1.6", "1.7", "1.8", "1.9")


def _doc(key: str, version: str, values: list[str]) -> str:
    one, wrap = TEMPLATES[key]
    return f'<?xml version="1.0"?>\n<sdf version="{version}">{wrap("".join(one(k, v) for k, v in enumerate(values)))}</sdf>\n'


def test_the_measured_lists_are_the_ones_read() -> None:
    for key in ("//sensor@type", "//light@type", "//particle_emitter@type", "//sensor/force_torque/frame",
                "//sensor/force_torque/measure_direction"):
        assert dom_rules.measured(key), key
    for path, attr, allowed in dom_rules.ONE_OF:
        key = f"{path}@{attr}" if attr else path
        if dom_rules.measured(key) is not None:
            assert allowed == dom_rules.measured(key), key
    assert {"boundingbox", "wideanglecamera", "wide_angle_camera", "navsat"} <= set(dom_rules.SENSOR_TYPES)


CORE = ("//sensor@type", "//light@type", "//particle_emitter@type")
CASES = [(k, v) for k in CORE for v in VERSIONS] + [(k, "1.9") for k in TEMPLATES
                                                    if k not in CORE and dom_rules.measured(k) is not None]


@pytest.mark.parametrize("key,version", CASES)
def test_every_listed_value_loads_and_others_are_refused(key: str, version: str, tmp_path: Path) -> None:
    values = list(dom_rules.measured(key) or ())
    assert values
    good = tmp_path / "good.sdf"
    good.write_text(_doc(key, version, values), encoding="utf-8")
    load_model_file(good)  # every listed value: no error
    bad_values = ["Camera", "wide-angle-camera", "bounding_box", "lamp", "ir"]  # "ir": listed in 1.4's prose only
    bad = tmp_path / "bad.sdf"
    bad.write_text(_doc(key, version, bad_values), encoding="utf-8")
    with pytest.raises(ModelError) as info:
        load_model_file(bad)
    assert [d.code for d in info.value.diagnostics if d.code == "SDF_UNSUPPORTED_VALUE"] == \
        ["SDF_UNSUPPORTED_VALUE"] * len(bad_values)
    exe = sdf_ref_path()
    if exe is None:
        pytest.skip("libsdformat-dev not installed: sdf_ref cannot be built")
    assert run_sdf_ref(exe, good).errors == []
    assert len(run_sdf_ref(exe, bad).errors) >= len(bad_values)  # a refused world gives two errors

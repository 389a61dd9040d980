"""xacro expansion: macros and name:=value arguments, $(find pkg) and package:// through the
ament index and ROS_PACKAGE_PATH, and every failure as a ModelError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from robot_state_format.errors import ModelError, ModelIOError
from robot_state_format.model import packages
from robot_state_format.model.loader import load_model, load_model_file, load_xacro, looks_like_xacro
from robot_state_format.model.xacro.args import parse_xacro_args
from robot_state_format.model.xacro.expand import expand_in_process, expand_xacro, expand_xacro_file

ARM = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="segments" default="2"/>
  <xacro:arg name="prefix" default=""/>
  <xacro:property name="length" value="0.5"/>
  <xacro:macro name="segment" params="i">
    <link name="$(arg prefix)link${i}"/>
    <joint name="$(arg prefix)joint${i}" type="revolute">
      <parent link="$(arg prefix)link${i-1}"/>
      <child link="$(arg prefix)link${i}"/>
      <origin xyz="0 0 ${length}"/>
      <axis xyz="0 1 0"/>
      <limit lower="${-pi/2}" upper="${pi/2}" effort="1" velocity="1"/>
    </joint>
  </xacro:macro>
  <link name="$(arg prefix)link0"/>
  <xacro:segment i="1"/>
  <xacro:if value="${int('$(arg segments)') >= 2}"><xacro:segment i="2"/></xacro:if>
  <xacro:if value="${int('$(arg segments)') >= 3}"><xacro:segment i="3"/></xacro:if>
</robot>
"""


@pytest.fixture(autouse=True)
def _clean_package_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    packages.clear_cache()
    yield
    packages.clear_cache()


def test_macros_properties_and_default_args() -> None:
    model = load_model(ARM, fmt="xacro")
    assert list(model.links) == ["link0", "link1", "link2"]
    assert model.links["link2"].pose[2, 3] == pytest.approx(1.0, rel=0, abs=1e-12)  # two segments of 0.5
    assert model.joints["joint1"].limits.upper == pytest.approx(1.5707963267948966, rel=0, abs=1e-12)


def test_arguments_change_the_robot() -> None:
    model = load_model(ARM, fmt="xacro", xacro_args={"segments": "3", "prefix": "left_"})
    assert list(model.links) == ["left_link0", "left_link1", "left_link2", "left_link3"]
    assert model.links["left_link3"].pose[2, 3] == pytest.approx(1.5, rel=0, abs=1e-12)


def test_detected_by_namespace_and_by_suffix(tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(ARM)
    assert list(load_model_file(path, xacro_args={"segments": "1"}).links) == ["link0", "link1"]
    assert list(load_model(ARM).links) == ["link0", "link1", "link2"]


def _make_package(root: Path, name: str, ament: bool) -> Path:
    """A package with a macro file; in an ament prefix (share/<pkg> + index marker) or a source tree."""
    if ament:
        share = root / "share" / name
        (root / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True, exist_ok=True)
        (root / "share" / "ament_index" / "resource_index" / "packages" / name).write_text("")
    else:
        share = root / "src" / "nested" / name
    (share / "urdf").mkdir(parents=True)
    (share / "package.xml").write_text(f"<package format='3'><name>{name}</name></package>")
    (share / "urdf" / "tool.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:macro name="tool"><link name="tool"><visual><geometry>'
        f'<mesh filename="package://{name}/meshes/tool.stl"/></geometry></visual></link>'
        '<joint name="tool_joint" type="fixed"><parent link="base"/><child link="tool"/></joint>'
        '</xacro:macro></robot>')
    return share


def _robot_including(spec: str) -> str:
    return ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            f'<xacro:include filename="{spec}"/><link name="base"/><xacro:tool/></robot>')


def test_find_through_the_ament_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    share = _make_package(tmp_path / "install", "my_tools", ament=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "install"))
    assert packages.find_package("my_tools") == share
    model = load_model(_robot_including("$(find my_tools)/urdf/tool.xacro"), fmt="xacro")
    assert set(model.links) == {"base", "tool"}
    mesh = model.links["tool"].visuals[0].geometry.filename
    assert mesh == "package://my_tools/meshes/tool.stl"
    assert packages.resolve_package_uri(mesh) == share / "meshes" / "tool.stl"


def test_find_through_ros_package_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    share = _make_package(tmp_path / "ws", "other_tools", ament=False)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws" / "src"))
    assert packages.find_package("other_tools") == share
    model = load_model(_robot_including("package://other_tools/urdf/tool.xacro"), fmt="xacro")
    assert set(model.links) == {"base", "tool"}


def test_relative_include_next_to_the_file(tmp_path: Path) -> None:
    share = _make_package(tmp_path, "rel_tools", ament=False)
    main = share / "urdf" / "robot.urdf.xacro"
    main.write_text(_robot_including("tool.xacro"))
    assert set(load_model_file(main).links) == {"base", "tool"}
    assert "tool_joint" in expand_xacro_file(main)


def test_unknown_package_is_a_model_error() -> None:
    with pytest.raises(ModelError) as info:
        expand_xacro(_robot_including("$(find no_such_pkg)/urdf/tool.xacro"), file="r.xacro")
    assert info.value.code == "MODEL_PACKAGE_NOT_FOUND"
    assert "no_such_pkg" in str(info.value)


@pytest.mark.parametrize("text, code", [
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="$(arg missing)"/></robot>',
     "XACRO_UNDEFINED_ARG"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="${1/0}"/></robot>', "XACRO_ERROR"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:nosuchmacro/></robot>', "XACRO_ERROR"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="/nonexistent/x.xacro"/>'
     '</robot>', "XACRO_INCLUDE"),
    ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link>\n</robot>', "XML_SYNTAX"),
])
def test_failures_are_model_errors(text: str, code: str) -> None:
    with pytest.raises(ModelError) as info:
        expand_xacro(text, file="bad.xacro")
    assert info.value.code == code
    assert info.value.diagnostics[0].file == "bad.xacro"


def test_state_is_restored_after_a_failure() -> None:
    with pytest.raises(ModelError):
        expand_xacro('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="$(arg missing)"/></robot>')
    assert list(load_model(ARM, fmt="xacro").links) == ["link0", "link1", "link2"]


def test_missing_file_is_an_io_error(tmp_path: Path) -> None:
    with pytest.raises(ModelIOError):
        expand_xacro_file(tmp_path / "none.xacro")


@pytest.mark.parametrize("items", [["a:=1"], ["c:="], ["flag:= true"], [" side :=left "], [":=1"], ["_private:=1"],
                                   ["__ns:=x"], ["a:=1", "a:=2"], ["path:=/a b/c"], ["b:=x:=y"], ["a:=1", "b:=x:=y"]])
def test_xacro_args_are_read_as_the_xacro_command_line_reads_them(items: list[str]) -> None:
    cli = pytest.importorskip("xacro.cli", reason="xacro (requirements) is the reference of its command line")
    try:
        expected = cli.load_mappings(items)
    except RuntimeError:
        with pytest.raises(ValueError, match="more than one ':='"):
            parse_xacro_args(items)
        return
    assert parse_xacro_args(items) == expected


def test_a_xacro_arg_without_an_assignment_is_refused() -> None:
    with pytest.raises(ValueError, match="not of the form name:=value"):
        parse_xacro_args(["a=1"])


def test_generated_urdf_keeping_the_xacro_namespace_keeps_its_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "generated.urdf"
    path.write_text('<?xml version="1.0"?>\n<robot name="g" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                    '  <link name="a"/>\n  <link name="a"/>\n</robot>\n')
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    assert [(d.code, d.line) for d in info.value.errors] == [("URDF_DUPLICATE_LINK", 4)]


GENERATED = """<?xml version="1.0"?>
<!-- generated by xacro from arm.urdf.xacro: ${not} $(expanded) -->
<robot name="g"
       xmlns:xacro="http://www.ros.org/wiki/xacro">
  <link name="a"/>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="b"/>
</robot>
"""


@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_declared_namespace_with_nothing_to_expand_reads_as_the_expansion_gives(as_bytes: bool) -> None:
    """xacro's output keeps xmlns:xacro: read without loading the expansion, the same text and model as
    the in-process expansion gives (the path every such document took before), sources on the same lines."""
    doc: str | bytes = GENERATED.encode() if as_bytes else GENERATED
    got = load_xacro(doc, file="gen.urdf")
    expanded = expand_in_process(doc, file="gen.urdf").text
    assert got.text == expanded and "xmlns:xacro" not in got.text and got.text.count("\n") == GENERATED.count("\n")
    assert repr(got.model) == repr(load_model(expanded, file="gen.urdf"))
    assert (got.model.joints["j"].source.line, got.model.links["b"].source.line) == (6, 8)


def test_a_declared_namespace_with_nothing_to_expand_never_loads_the_expansion() -> None:
    code = ("import sys\nfrom robot_state_format.model.loader import load_model\n"
            f"m = load_model({GENERATED!r})\n"
            "print(sorted(m.links), 'robot_state_format.model.xacro.expand' in sys.modules, 'xacro' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["['a',", "'b']", "False", "False"]



# -- diagnostics point into the xacro sources, not the expanded text ------------------------------
XA_MAIN = """<?xml version="1.0"?>
<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="parts.xacro"/>
  <link name="base"/>
  <xacro:wheel name="left" parent="base"/>
  <xacro:wheel name="right" parent="{right_parent}"/>
  {extra}
</robot>
"""
XA_PARTS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <!-- a wheel on a parent link -->
  <xacro:macro name="wheel" params="name parent">
    <link name="${name}_wheel"/>
    <joint name="${name}_joint" type="revolute">
      <parent link="${parent}"/>
      <child link="${name}_wheel"/>
      <limit effort="1" velocity="1" lower="0.3" upper="0.3"/>
    </joint>
  </xacro:macro>
</robot>
"""


def _write_xa(tmp_path: Path, right_parent: str = "base", extra: str = "") -> Path:
    (tmp_path / "parts.xacro").write_text(XA_PARTS)
    main = tmp_path / "main.urdf.xacro"
    main.write_text(XA_MAIN.format(right_parent=right_parent, extra=extra))
    return main


def test_errors_name_the_xacro_file_and_line_they_come_from(tmp_path: Path) -> None:
    main = _write_xa(tmp_path, right_parent="chassis", extra='<link name="base"/>')
    with pytest.raises(ModelError) as info:
        load_model_file(main)
    got = {(d.code, Path(d.file).name, d.line, d.message) for d in info.value.errors}
    assert got == {
        # the second <link name="base"> is on line 7 of main.urdf.xacro, the first on line 4
        ("URDF_DUPLICATE_LINK", "main.urdf.xacro", 7, "link name 'base' is already used (line 4)"),
        # the joint comes from the macro body: line 6 of parts.xacro
        ("URDF_UNKNOWN_LINK", "parts.xacro", 6, "joint 'right_joint': parent link 'chassis' does not exist"),
    }


def test_model_sources_and_warnings_point_into_the_sources(tmp_path: Path) -> None:
    model = load_model_file(_write_xa(tmp_path))
    where = {name: (Path(x.source.file).name, x.source.line)
             for name, x in [*model.links.items(), *model.joints.items()]}
    assert where == {"base": ("main.urdf.xacro", 4), "left_wheel": ("parts.xacro", 5),
                     "right_wheel": ("parts.xacro", 5), "left_joint": ("parts.xacro", 6),
                     "right_joint": ("parts.xacro", 6)}
    # the macro's zero-range <limit> (line 9 of parts.xacro) warns once per wheel; no link has a mass, which
    # libsdformat (Gazebo) refuses: that warning names the root link where it was written
    warned = [(d.code, Path(d.file).name, d.line) for d in model.warnings]
    assert warned == [("URDF_ZERO_RANGE_LIMIT", "parts.xacro", 9)] * 2 + [("SDF_URDF_NO_LINK", "main.urdf.xacro", 4)]


def test_expansion_is_the_xacro_commands_layout_without_marks(tmp_path: Path) -> None:
    text = expand_xacro_file(_write_xa(tmp_path))
    assert "_rsf_src" not in text
    lines = text.splitlines()
    assert lines[0] == '<?xml version="1.0" ?>' and lines[1] == '<robot name="r">'
    assert lines[2] == '  <link name="base"/>' and lines[-1] == "</robot>"


def _real_xacro(path: Path) -> str:
    """The expansion of the xacro command itself (the reference), or its error."""
    code = "import sys, xacro; sys.argv = ['xacro', sys.argv[1]]; xacro.main()"
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    return r.stdout if r.returncode == 0 else "ERROR " + r.stderr


def test_an_optional_include_that_is_missing_is_skipped_as_xacro_skips_it(tmp_path: Path) -> None:
    pytest.importorskip("xacro")
    path = tmp_path / "r.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                    '  <xacro:include filename="parts/missing.xacro" optional="true"/>\n  <link name="base"/>\n</robot>')
    assert '<link name="base"/>' in _real_xacro(path)
    assert list(load_model_file(path).links) == ["base"]
    # not optional: refused by both, ours at the include's line
    path.write_text(path.read_text().replace(' optional="true"', ""))
    assert _real_xacro(path).startswith("ERROR")
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    (d,) = info.value.diagnostics
    assert (d.code, d.line) == ("XACRO_INCLUDE", 2) and "missing.xacro: No such file or directory" in d.message


def test_cdata_is_left_alone_as_xacro_leaves_it(tmp_path: Path) -> None:
    pytest.importorskip("xacro")
    path = tmp_path / "r.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n  <link name="base"/>\n'
                    '  <gazebo><plugin name="p" filename="x.so"><![CDATA[${kept} $(arg none) <xacro:no/>]]>'
                    '</plugin></gazebo>\n</robot>')
    assert "<![CDATA[${kept} $(arg none) <xacro:no/>]]>" in _real_xacro(path)
    loaded = load_xacro(path.read_bytes(), file=str(path))
    assert "<![CDATA[${kept} $(arg none) <xacro:no/>]]>" in loaded.text
    # and the expansion is not taken for unexpanded xacro: nothing outside the CDATA is
    assert "XACRO_UNEXPANDED" not in [w.code for w in loaded.model.warnings] and list(loaded.model.links) == ["base"]


@pytest.mark.parametrize("text, xacro", [
    ('<robot><gazebo><![CDATA[${x} $(arg y)]]></gazebo></robot>', False),
    ('<robot><!-- <![CDATA[ --><link name="${x}"/></robot>', True),  # a CDATA opener inside a comment
    ('<robot><![CDATA[ <!-- ]]><link name="${x}"/></robot>', True),  # a comment opener inside CDATA
    ('<robot><![CDATA[ unterminated ${x}', False),
])
def test_text_xacro_never_evaluates_is_not_taken_for_xacro(text: str, xacro: bool) -> None:
    assert looks_like_xacro(text) is xacro
    assert looks_like_xacro(text.encode()) is xacro

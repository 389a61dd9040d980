"""xacro runs code: every expansion is bounded (CPU time, memory, wall time, output, elements) and a
document that is not trusted runs confined (issue 25). Also: text inside XML comments is not xacro.

The errors must name the file and the limit (its RSF_MAX_* variable): asserted on the message, never
on a measured time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest

from robot_state_format.errors import ModelError, Severity
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.xacro import confine
from robot_state_format.model.xacro.child_control import Confinement
from robot_state_format.model.xacro.expand import expand_xacro_mapped

NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
CLI = [sys.executable, "-m", "robot_state_format"]
XACRO_CMD = Path(sys.executable).with_name("xacro")


def escape(command: str) -> str:
    """xacro that runs ``command`` in a shell, escaping xacro's expression sandbox through the module
    globals of ``xacro.load_yaml`` (plain ``xacro`` runs it: see the first test)."""
    return (f'<robot {NS} name="evil">\n'
            '  <xacro:property name="f" value="${xacro.load_yaml}"/>\n'
            "  <xacro:property name=\"d\" value=\"${python.vars(python.type(f))['__globals__']}\"/>\n"
            "  <xacro:property name=\"g\" value=\"${python.vars(python.type(d))['__get__'](d, f, None)}\"/>\n"
            f"  <link name=\"l${{g['os'].system('{command}')}}\"/>\n</robot>\n")


def check(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "check", str(path)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


@pytest.mark.skipif(not XACRO_CMD.exists(), reason="the xacro command is not installed")
def test_the_escape_payload_runs_code_in_plain_xacro(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    (tmp_path / "evil.xacro").write_text(escape(f"touch {marker}"))
    subprocess.run([str(XACRO_CMD), str(tmp_path / "evil.xacro")], capture_output=True, timeout=120, check=True)
    assert marker.exists()  # so the refusals below are refusals of working code


@pytest.mark.parametrize(("body", "env", "named"), [
    ('<link name="l${10**10**8}"/>', {"RSF_MAX_XACRO_CPU_SECONDS": "1", "RSF_MAX_XACRO_SECONDS": "120"},
     "CPU-time limit of 1 s (RSF_MAX_XACRO_CPU_SECONDS)"),
    ("<xacro:property name=\"big\" value=\"${'a'*10**9}\"/><link name=\"l${len(big)}\"/>", {},
     "memory limit of 512 MiB (RSF_MAX_XACRO_MEMORY_BYTES)"),
    ("<link name=\"${'a'*300000}\"/>", {"RSF_MAX_DOCUMENT_BYTES": "100000"},
     "output-size limit of 100000 bytes (RSF_MAX_DOCUMENT_BYTES)"),
    ('<xacro:macro name="b" params="n"><link name="l${n}"/><xacro:if value="${n &lt; 40}">'
     '<xacro:b n="${n+1}"/><xacro:b n="${n+1}"/></xacro:if></xacro:macro><xacro:b n="0"/>', {},
     "more than 10000 elements (RSF_MAX_XACRO_ELEMENTS; a macro call counts 10, an element nested in N calls "
     "1 + N/200)"),
    ('<xacro:macro name="b"><xacro:b/><xacro:b/></xacro:macro><xacro:b/>', {}, "recursion limit"),
])
def test_hostile_xacro_files_end_with_the_limit_named(tmp_path: Path, body: str, env: dict[str, str],
                                                      named: str) -> None:
    path = tmp_path / "hostile.urdf.xacro"
    path.write_text(f'<robot {NS} name="r">{body}</robot>\n')
    done = check(path, **env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith(str(path)) and ": error: [XACRO_" in done.stderr and named in done.stderr
    assert "Traceback" not in done.stderr


def _links_inside_nested_calls(depth: int, links: int) -> str:
    """``links`` links made inside ``depth`` nested macro calls (each macro calls the next once)."""
    levels = "".join(f'<xacro:macro name="m{i}"><xacro:m{i + 1}/></xacro:macro>' for i in range(depth))
    bottom = "".join(f'<link name="l{j}"/>' for j in range(links))
    return f'<robot {NS} name="r">{levels}<xacro:macro name="m{depth}">{bottom}</xacro:macro><xacro:m0/></robot>'


@pytest.mark.parametrize(("depth", "refused"), [(1, False), (100, False), (150, True)])
def test_elements_deep_in_macro_calls_count_more(monkeypatch: pytest.MonkeyPatch, depth: int,
                                                 refused: bool) -> None:
    """Each name look-up walks one scope per enclosing macro call: an element N calls deep counts
    1 + N/200 of RSF_MAX_XACRO_ELEMENTS (2 000 here), a call 8 more. 400 links 100 calls deep count
    about 1.5 each, the expansion 1 664 in all (with each call, its arguments and body); 150 calls deep,
    2 327: refused."""
    monkeypatch.setattr("robot_state_format.limits.MAX_XACRO_ELEMENTS", 2000)
    text = _links_inside_nested_calls(depth, 400)
    if refused:
        with pytest.raises(ModelError, match=r"more than 2000 elements .*nested in N calls 1 \+ N/200"):
            expand_xacro_mapped(text)
    else:
        assert expand_xacro_mapped(text).text.count("<link ") == 400


@pytest.mark.parametrize(("calls", "refused"), [(85, False), (95, True)])
def test_a_macro_call_counts_as_its_work(monkeypatch: pytest.MonkeyPatch, calls: int, refused: bool) -> None:
    """A call of a one-link macro costs 11 (the call 8, its arguments 1, its body 1, the link 1): 85
    calls in a row are 937 with the root, 95 are 1 047, past 1 000 (as elements alone, 286)."""
    monkeypatch.setattr("robot_state_format.limits.MAX_XACRO_ELEMENTS", 1000)
    text = (f'<robot {NS} name="r"><xacro:macro name="m" params="i"><link name="l${{i}}"/></xacro:macro>'
            + "".join(f'<xacro:m i="{i}"/>' for i in range(calls)) + "</robot>")
    if refused:
        with pytest.raises(ModelError, match=r"more than 1000 elements .*a macro call counts 10"):
            expand_xacro_mapped(text)
    else:
        assert expand_xacro_mapped(text).text.count("<link ") == calls


def test_documents_holding_more_than_an_expansion_processes_are_refused_first(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The main document and its includes hold more elements than an expansion may process: refused
    before xacro parses them, at the first element past the bound (file and line)."""
    monkeypatch.setattr("robot_state_format.limits.MAX_XACRO_ELEMENTS", 100)
    links = "\n".join(f'<link name="i{j}"/>' for j in range(60))
    (tmp_path / "inc.xacro").write_text(f'<robot {NS}>\n{links}\n</robot>\n')
    main = tmp_path / "main.urdf.xacro"
    main.write_text(f'<robot {NS} name="r">\n<xacro:include filename="inc.xacro"/>\n'
                    + "\n".join(f'<link name="m{j}"/>' for j in range(50)) + "\n</robot>\n")
    with pytest.raises(ModelError) as info:
        load_model_file(main)
    d = info.value.diagnostics[0]
    assert d.code == "XACRO_TOO_LARGE" and "hold more than 100 elements" in d.message
    # main: 52 elements (root, include, 50 links); the include's root and its 48th link make 101
    assert (d.file, d.line) == (str(tmp_path / "inc.xacro"), 49)
    main.write_text(f'<robot {NS} name="r">\n<xacro:property name="p" value="1"/>\n'
                    + "\n".join(f'<link name="m{j}"/>' for j in range(120)) + "\n</robot>\n")
    with pytest.raises(ModelError) as info:
        load_model_file(main)
    d = info.value.diagnostics[0]
    assert d.code == "XACRO_TOO_LARGE" and (d.file, d.line) == (str(main), 101)  # the 101st element's line


def test_the_wall_time_limit_ends_a_blocked_expansion(tmp_path: Path) -> None:
    path = tmp_path / "sleeper.xacro"
    path.write_text(escape("sleep 4"))
    done = check(path, RSF_MAX_XACRO_SECONDS="1")
    assert done.returncode == 1
    assert f"{path}: error: [XACRO_LIMIT]" in done.stderr and "time limit of 1 s (RSF_MAX_XACRO_SECONDS)" in done.stderr


def test_a_file_the_user_asked_for_runs_as_xacro_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded, not confined: $(optenv) sees the environment, includes and YAML anywhere are read."""
    monkeypatch.setenv("RSF_TEST_ROBOT", "r2")
    (tmp_path / "v.yaml").write_text("length: 0.25\n")
    path = tmp_path / "r.urdf.xacro"
    path.write_text(f'<robot {NS} name="$(optenv RSF_TEST_ROBOT x)"><link name="a"/><link name="b"/>'
                    '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
                    f"<origin xyz=\"0 0 ${{xacro.load_yaml('{tmp_path / 'v.yaml'}')['length']}}\"/></joint></robot>")
    model = load_model_file(path)
    assert model.name == "r2" and list(model.joints["j"].origin[:3, 3]) == [0.0, 0.0, 0.25]


def test_the_same_expansion_in_a_forked_and_in_a_new_process() -> None:
    text = f'<robot {NS} name="r"><xacro:property name="w" value="3"/><link name="l${{w*2}}"/>\n<link name="x"/></robot>'
    forked = expand_xacro_mapped(text, file="r.xacro")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # a second Python thread: no fork, a new interpreter
    other.start()
    try:
        spawned = expand_xacro_mapped(text, file="r.xacro")
    finally:
        stop.set()
        other.join()
    assert forked.text == spawned.text and 'name="l6"' in forked.text
    assert forked.lines == spawned.lines
    assert forked.lines


# -- confined: an untrusted document --------------------------------------------------------------------------
def test_confined_expansion_runs_no_command_and_reads_no_environment(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "MARKER"
    with pytest.raises(ModelError, match=r"os\.system is not allowed"):
        expand_xacro_mapped(escape(f"touch {marker}"), file="<robot_description>", confinement=Confinement())
    assert not marker.exists()
    monkeypatch.setenv("RSF_TEST_SECRET", "hunter2")
    out = expand_xacro_mapped(f'<robot {NS} name="r"><link name="a$(optenv RSF_TEST_SECRET none)"/></robot>',
                              file="<robot_description>", confinement=Confinement())
    assert 'name="anone"' in out.text


def test_confined_expansion_reads_only_under_the_allowed_directories(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    for d in (allowed, other):
        (d / "v.yaml").write_text(f"where: {d.name}\n")
        (d / "part.xacro").write_text(f'<robot {NS}><link name="{d.name}_part"/></robot>')

    def doc(d: Path) -> str:
        return (f'<robot {NS} name="r"><link name="${{xacro.load_yaml(\'{d / "v.yaml"}\')[\'where\']}}"/>'
                f'<xacro:include filename="{d / "part.xacro"}"/></robot>')

    out = expand_xacro_mapped(doc(allowed), file="<robot_description>", confinement=Confinement((str(allowed),)))
    assert 'name="allowed"' in out.text and 'name="allowed_part"' in out.text
    with pytest.raises(ModelError, match="not allowed"):
        expand_xacro_mapped(doc(other), file="<robot_description>", confinement=Confinement((str(allowed),)))
    with pytest.raises(ModelError, match="not allowed"):
        expand_xacro_mapped(doc(allowed), file="<robot_description>", confinement=Confinement())


@pytest.mark.skipif(confine.landlock_abi() == 0, reason="the kernel offers no Landlock")
def test_landlock_alone_denies_reads_writes_and_commands(tmp_path: Path) -> None:
    """The kernel layer without the audit hook (as code that got past it would see it)."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "ok.txt").write_text("ok")
    (tmp_path / "secret.txt").write_text("secret")
    sh = shutil.which("sh") or "/bin/sh"
    code = (
        "import os, sys, subprocess\n"
        "from robot_state_format.model.xacro import confine\n"
        f"assert confine._landlock([{str(allowed)!r}])\n"
        f"print(open({str(allowed / 'ok.txt')!r}).read())\n"
        "for attempt in (lambda: open(%r).read(), lambda: open(%r, 'w'),\n"
        "                lambda: subprocess.run([%r, '-c', 'touch %s'], check=True)):\n"
        "    try:\n        attempt()\n        print('ALLOWED')\n"
        "    except (OSError, subprocess.CalledProcessError) as exc:\n        print('denied', type(exc).__name__)\n"
    ) % (str(tmp_path / "secret.txt"), str(allowed / "new.txt"), sh, tmp_path / "MARKER")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "ok" and "ALLOWED" not in done.stdout
    assert done.stdout.count("denied") == 3
    assert not (tmp_path / "MARKER").exists() and not (allowed / "new.txt").exists()


# -- comments are not xacro ------------------------------------------------------------------------------------
ROBOT = """<?xml version="1.0"?>
<robot name="r" {ns}>
  <!-- an old version: <xacro:property name="w" value="${{2*pi}}"/>
       <joint soft_lower_limit="${{-15 * deg}}"/> $(find pkg) -->
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
{extra}</robot>
"""


@pytest.mark.parametrize("ns", ["", NS])
def test_text_in_comments_is_not_xacro(ns: str) -> None:
    model = load_model(ROBOT.format(ns=ns, extra=""), file="r.urdf")
    assert [d.code for d in model.warnings] == []
    assert model.links["a"].source.line == 5


def test_xacro_outside_comments_is_still_found_at_its_line() -> None:
    model = load_model(ROBOT.format(ns="", extra='  <gazebo><plugin name="${w}"/></gazebo>\n'), file="r.urdf")
    (d,) = [d for d in model.warnings if d.code == "XACRO_UNEXPANDED"]
    assert (d.line, d.severity) == (6, Severity.WARNING) and "${w}" in d.message


def _example_robot(rel: str) -> Path:
    path = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots" / rel
    if not path.exists():
        pytest.skip("example-robot-data is not installed")
    return path


@pytest.mark.parametrize("rel", ["talos_data/robots/talos_full_v2.urdf", "tiago_description/robots/tiago_dual.urdf"])
def test_generated_urdfs_with_xacro_in_comments_read_clean(rel: str) -> None:
    model = load_model_file(_example_robot(rel))
    codes = {d.code for d in model.warnings}
    assert not codes & {"XACRO_UNEXPANDED", "URDF_UNDECLARED_PREFIX"}, model.warnings
    assert all("xacro expansion" not in d.message for d in model.warnings)


def test_comments_kept_by_a_real_expansion_are_not_xacro_either(tmp_path: Path) -> None:
    path = tmp_path / "r.urdf.xacro"
    path.write_text(f'<robot name="r" {NS}>\n  <xacro:property name="n" value="a"/>\n'
                    '  <!-- was: <xacro:leg side="${side}"/> $(arg x) -->\n  <link name="${n}">'
                    '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
                    '</link>\n'
                    '  <link name="b"/>\n  <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                    '</robot>\n')
    model = load_model_file(path)
    assert model.warnings == []
    assert (model.links["a"].source.file, model.links["a"].source.line) == (str(path), 4)


@pytest.mark.skipif(not XACRO_CMD.exists(), reason="the xacro command is not installed")
def test_the_linear_node_replacement_gives_the_xacro_command_output(tmp_path: Path) -> None:
    """model/xacro/dom.py against xacro's own replace_node (the xacro command): macros with blocks,
    nested and recursive calls, includes, conditionals, comments, xacro:element and attributes."""
    (tmp_path / "inc.xacro").write_text(f'<robot {NS}><!-- included --><link name="inc_a"/>'
                                        '<xacro:macro name="inc_m" params="n"><link name="inc_${n}"/></xacro:macro>'
                                        '<link name="inc_b"/></robot>')
    body = (f'<robot {NS} name="r">\n  <!-- head -->\n  <xacro:include filename="inc.xacro"/>\n'
            '  <xacro:macro name="seg" params="i *geom **extra">\n    <link name="l${i}">\n'
            '      <visual><xacro:insert_block name="geom"/></visual>\n    </link>\n'
            '    <xacro:insert_block name="extra"/>\n    <xacro:if value="${i &lt; 3}">\n'
            '      <xacro:seg i="${i+1}"><box size="${i} 1 1"/><extra><joint name="j${i}"/></extra></xacro:seg>\n'
            '    </xacro:if>\n    <xacro:unless value="${i}"><link name="zero"/></xacro:unless>\n'
            '  </xacro:macro>\n  <xacro:seg i="0"><sphere radius="1"/><extra><!-- x --><joint name="first"/></extra>'
            '</xacro:seg>\n  <xacro:inc_m n="q"/>\n  <xacro:element xacro:name="link" name="made"/>\n'
            '  <xacro:attribute name="version" value="2"/>\n</robot>\n')
    path = tmp_path / "r.urdf.xacro"
    path.write_text(body)
    upstream = subprocess.run([str(XACRO_CMD), str(path)], capture_output=True, text=True, timeout=120, check=True)

    def without_banner(text: str) -> list[str]:
        return [line for line in text.splitlines() if "autogenerated by xacro" not in line
                and "EDITING THIS FILE BY HAND" not in line and not line.startswith("<!-- ====")]

    ours = expand_xacro_mapped(body, file=str(path))
    assert without_banner(ours.text) == without_banner(upstream.stdout)

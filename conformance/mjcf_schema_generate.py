"""Write robot_state_format/model/mjcf/schema_text.py: MuJoCo's own XML schema (``mj_printSchema``) as text.

    .venv/bin/python conformance/mjcf_schema_generate.py     # after a mujoco upgrade; review the diff
"""

from __future__ import annotations

from pathlib import Path

import mujoco

OUT = Path(__file__).resolve().parents[1] / "robot_state_format" / "model" / "mjcf" / "schema_text.py"


def main() -> None:
    text = "\n".join(line.rstrip() for line in mujoco.mj_printSchema(False, False).splitlines() if line.strip())
    OUT.write_text(f'"""MuJoCo {mujoco.__version__}\'s XML schema as ``mujoco.mj_printSchema(False, False)`` prints it '
                   '(written by\nconformance/mjcf_schema_generate.py; read by :mod:`.schema_check`)."""\n\n'
                   f'SCHEMA = """\\\n{text}\n"""\n')


if __name__ == "__main__":
    main()

"""Where the repository and test/ are, for test modules at any depth of test/'s rooms (test/model/sdf/...).

The test modules live in folders mirroring robot_state_format/ (see test/project/test_architecture.py); paths
built from their own ``__file__`` would depend on that depth, these do not.
"""

from __future__ import annotations

from pathlib import Path

TEST_DIR = Path(__file__).resolve().parent  # test/: conftest, helpers/, fixtures/, the harness modules
REPO_ROOT = TEST_DIR.parent

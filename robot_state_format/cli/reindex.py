"""``robot-state-format reindex RECORDING_DIR``: rebuild ``metadata.yaml`` of a recording (like ``ros2 bag reindex``).

For a recording cut off by a crash (no ``metadata.yaml``): the bag information is rebuilt from the
readable chunks of its ``.mcap`` files (message count per topic and per file, start, duration, file
list) and written to ``RECORDING_DIR/metadata.yaml``.  Prints one line per topic and a summary line;
a file that ends early is named on stderr.

Exit codes (the table of ``robot-state-format --help``): 0 written, 1 invalid input (a file that is not
MCAP), 2 usage or I/O error (not a directory, no .mcap file, unreadable, metadata.yaml not writable).
"""

from __future__ import annotations

import argparse
import sys

from robot_state_format.recording import RecordingError, RecordingFormatError, reindex


def _run(args: argparse.Namespace) -> int:
    try:
        result = reindex(args.directory)
    except RecordingError as exc:
        print(f"robot-state-format reindex: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, RecordingFormatError) else 2
    info = result.info
    for name, ok in result.complete.items():
        if not ok:
            print(f"robot-state-format reindex: {name} ends early (cut off): read up to its last complete chunk",
                  file=sys.stderr)
    for t in info["topics_with_message_count"]:
        meta = t["topic_metadata"]
        print(f"{meta['name']} ({meta['type']}): {t['message_count']} messages")
    print(f"{result.path}: {info['message_count']} messages in {len(info['files'])} file(s), "
          f"{info['duration']['nanoseconds'] / 1e9:.3f} s")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("reindex", help="rebuild metadata.yaml of a recording from its MCAP files",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("directory", metavar="RECORDING_DIR", help="the recording directory (holding *_0.mcap)")
    p.set_defaults(func=_run)

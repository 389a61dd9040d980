"""Confining a child process that runs code from an untrusted document (a xacro description from the network).

Two layers, both installed in the child just before the untrusted code runs (every module it needs is
imported by then):

* Linux Landlock (kernel 5.13+, when the kernel enables it): the process and anything it starts may only
  read files and list directories under the allowed directories; it can execute no file, write, create,
  remove or rename nothing, and (Landlock ABI 4+) open no TCP connection and bind no TCP port. This is
  enforced by the kernel: code that escapes xacro's expression sandbox is bound by it too.
* A Python audit hook (PEP 578, cannot be removed once added) refusing ``open`` outside the allowed
  directories or for writing, process creation (``os.system``, ``subprocess``, ``os.exec*``, ``os.fork``,
  ``os.posix_spawn``), sockets and ``ctypes``: the same rules where Landlock is not available.

:func:`confine` says which layers were installed.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence

__all__ = ["confine", "landlock_abi"]

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_PR_SET_NO_NEW_PRIVS = 38
_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
_NET_ALL = (1 << 0) | (1 << 1)  # bind, connect TCP (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets, signals to processes outside (ABI 6)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers; 0 when it has none (or is not Linux)."""
    libc = _libc()
    if libc is None:
        return 0
    version = int(libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_RULESET_VERSION)))
    return max(version, 0)


def _landlock(readable: Sequence[str]) -> bool:
    """Restrict this process (and its future children) with Landlock; False when not available."""
    libc = _libc()
    abi = landlock_abi()
    if libc is None or abi <= 0:
        return False
    fs_bits = {1: 13, 2: 14, 3: 15, 4: 15}.get(abi, 16)  # REFER (2), TRUNCATE (3), IOCTL_DEV (5)
    attr = _RulesetAttr((1 << fs_bits) - 1, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    if fd < 0:
        return False
    try:
        for path in readable:
            try:
                dirfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # an allowed directory that does not exist: nothing to allow
            try:
                rule = _PathBeneathAttr(_READ_FILE | _READ_DIR if os.path.isdir(path) else _READ_FILE, dirfd)
                if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), "landlock_add_rule failed")
            finally:
                os.close(dirfd)
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(fd)
    return True


_REFUSED_EVENTS = ("os.system", "os.fork", "os.forkpty", "os.exec", "os.spawn", "os.posix_spawn", "os.kill",
                   "os.killpg", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link",
                   "os.truncate", "os.chmod", "os.chown", "os.chdir", "os.putenv", "os.unsetenv",
                   "subprocess.", "socket.", "ctypes.", "shutil.", "pty.", "urllib.", "http.", "ftplib.",
                   "smtplib.", "sys.addaudithook", "sys.setprofile", "sys.settrace",
                   "object.__setattr__", "object.__delattr__", "code.__new__", "function.__new__",
                   "import")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _audit_hook(readable: Sequence[str]) -> None:
    roots = tuple(os.path.join(os.path.realpath(p), "") for p in readable)

    def allowed(path: object) -> bool:
        if isinstance(path, int):
            return True  # an already open descriptor
        if not isinstance(path, (str, bytes, os.PathLike)):
            return False
        real = os.path.join(os.path.realpath(os.fsdecode(path)), "")
        return real.startswith(roots)

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, 0))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing or not allowed(path):
                raise PermissionError(f"reading {path!r} is not allowed here (only under the allowed "
                                      "directories, and never for writing)")
        elif event in ("os.listdir", "os.scandir", "glob.glob"):
            if args and not allowed(args[0]):
                raise PermissionError(f"listing {args[0]!r} is not allowed here")
        elif event.startswith(_REFUSED_EVENTS):
            what = f"{event} {args[0]}" if event == "import" and args else event
            raise PermissionError(f"{what} is not allowed while expanding an untrusted description")

    sys.addaudithook(hook)


def confine(readable: Sequence[str]) -> list[str]:
    """Confine this process: read-only access under ``readable`` (directories or files), nothing else.

    Call once every module the untrusted code needs is imported (imports are refused afterwards).
    Returns the names of the layers installed (``"landlock"``, ``"audit-hook"``).
    """
    layers = []
    if _landlock(readable):
        layers.append("landlock")
    _audit_hook(readable)
    layers.append("audit-hook")
    return layers

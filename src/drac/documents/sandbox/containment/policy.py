"""The sandbox a parser process puts itself in: resource limits, no network, no files but its
own (standard library only: `lo_guard.py` loads this file by path before it starts
LibreOffice, and the pdfium workers call it after their imports).

Each layer is applied where the platform allows it and reported by name, so a caller can
say which protections were in force (Lambda, for one, allows no namespaces):

- "memory": RLIMIT_AS, the address space of the process and of everything it starts;
- "no core files": RLIMIT_CORE 0 (a crash must not write the document's pages to disk);
- "network namespace": a private network namespace with no interface up, so no connection
  leaves, not even to 127.0.0.1 (`unshare(CLONE_NEWNET)` as root, else inside a new user
  namespace when unprivileged user namespaces are allowed);
- "landlock files": Landlock (Linux 5.13+) lets the process read only beneath the paths it
  names and write only beneath its work folder;
- "landlock network": where Landlock has network rules (ABI 4, Linux 6.7+), no TCP connect
  or bind, even when no namespace could be made.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import sys
from collections.abc import Iterable

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
_SYS_LANDLOCK = {"create": 444, "add_rule": 445, "restrict_self": 446}
"""Landlock's syscall numbers, the same on x86_64 and aarch64 (the generic table)."""
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_FILE = 1 << 5
_MAKE_SOCK = 1 << 9
_TRUNCATE = 1 << 14
_IOCTL_DEV = 1 << 15
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0

_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _Ruleset(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


CREDENTIAL_PREFIXES = ("AWS_", "_X_AMZN_", "_AWS_XRAY_")
"""Environment variables a parser process never gets: in Lambda, `AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` are the function role's credentials,
`AWS_LAMBDA_RUNTIME_API` the address of the invocation API, `AWS_CONTAINER_*` a credentials
endpoint; parsers need none of them, and a parser exploit would otherwise read them from its
own environment."""


def parser_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The environment a parser process starts with: this one without any AWS credential,
    endpoint or trace variable."""
    return {k: v for k, v in environ.items() if not k.upper().startswith(CREDENTIAL_PREFIXES)}


PR_SET_DUMPABLE, PR_GET_DUMPABLE = 4, 3


def hide_from_children() -> bool:
    """Make this process non-dumpable, so the processes it starts (the same user, without
    CAP_SYS_PTRACE) cannot read its environment or memory through /proc (the kernel allows
    that only to a process that may ptrace it); True when set. For the Lambda process whose
    environment holds the role's credentials: its parsers' own environment has none."""
    libc = _libc()
    return libc is not None and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: no Landlock, or it is disabled)."""
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(
        _SYS_LANDLOCK["create"], None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION
    )
    return max(0, int(version))


def limit_resources(memory_bytes: int) -> list[str]:
    """Cap the address space (never above a hard limit set outside drac) and forbid core
    files; the names of the limits set."""
    applied = []
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        applied.append("no core files")
    if memory_bytes > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            memory_bytes = min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        applied.append("memory")
    return applied


def leave_network() -> bool:
    """Move this (single-threaded) process into a new network namespace with no interface
    up; False when the platform does not allow it."""
    libc = _libc()
    if libc is None:
        return False
    if libc.unshare(CLONE_NEWNET) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return False
    # Map our own ids into the new user namespace so files keep their owner (best effort).
    with contextlib.suppress(OSError):
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    return True


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def restrict_files(
    readable: Iterable[str],
    writable: Iterable[str] = (),
    *,
    sockets: Iterable[str] = (),
    network: bool = False,
) -> list[str]:
    """Let this process (and what it starts) read only beneath `readable` and write only
    beneath `writable` (and, unless `network`, connect nowhere), with Landlock; the names
    of the layers in force ([] without Landlock). Paths that do not exist are skipped."""
    libc = _libc()
    abi = landlock_abi()
    if libc is None or abi < 1:
        return []
    handled_fs = (1 << 13) - 1  # every right of ABI 1
    if abi >= 2:
        handled_fs |= 1 << 13  # REFER: moving files between folders
    if abi >= 3:
        handled_fs |= _TRUNCATE
    if abi >= 5:
        handled_fs |= _IOCTL_DEV
    ruleset = _Ruleset(handled_fs, 0, 0)
    size = 8
    if abi >= 4 and not network:
        ruleset.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        ruleset.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET
        size = 24
    fd = libc.syscall(_SYS_LANDLOCK["create"], ctypes.byref(ruleset), ctypes.c_size_t(size), 0)
    if fd < 0:
        return []
    try:
        for path in readable:
            _allow(libc, fd, path, _READ & handled_fs)
        for path in writable:
            _allow(libc, fd, path, handled_fs)
        for path in sockets:  # create and remove a socket there: no reading, no writing
            _allow(libc, fd, path, _MAKE_SOCK | _REMOVE_FILE)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return []
        if libc.syscall(_SYS_LANDLOCK["restrict_self"], fd, 0) != 0:
            return []
    finally:
        os.close(fd)
    layers = ["landlock files"]
    if abi >= 4 and not network:
        layers.append("landlock network")
    return layers


def _allow(libc: ctypes.CDLL, ruleset_fd: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        rule = _PathBeneath(access, fd)
        libc.syscall(
            _SYS_LANDLOCK["add_rule"], ruleset_fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
        )
    finally:
        os.close(fd)


def apply_policy(
    *,
    memory_bytes: int,
    readable: Iterable[str],
    writable: Iterable[str] = (),
    sockets: Iterable[str] = (),
    network_namespace: bool = True,
    landlock: bool = True,
) -> list[str]:
    """Apply every layer the platform allows to this single-threaded process, in an order
    that keeps each possible (namespaces before Landlock); the names of the layers applied.
    A layer turned off here is skipped (tests show each layer holding on its own)."""
    applied = limit_resources(memory_bytes)
    if network_namespace and leave_network():
        applied.append("network namespace")
    if landlock:
        applied.extend(restrict_files(readable, writable, sockets=sockets))
    return applied

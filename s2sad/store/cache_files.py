"""The cache's files on disk, trusted only if this user wrote them where only this user can.

Opening through descriptors checked after opening (never following a link), atomic writes,
and the per-user secret that authenticates entries.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

ENTRY_SUFFIX = ".entry"
TMP_PREFIX = ".tmp-"
_SECRET = "secret"
_SECRET_BYTES = 32

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O_NOFOLLOW | _O_CLOEXEC
# O_NONBLOCK: a FIFO planted under an entry's name must not hang the open
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
# Opening relative to a checked directory descriptor is what makes the checks hold for
# what is read; a platform without it (Windows) has no disk cache.
SUPPORTED = (os.name == "posix" and _O_NOFOLLOW != 0 and os.open in os.supports_dir_fd
             and os.link in os.supports_dir_fd and os.unlink in os.supports_dir_fd)


class UnsafeCacheError(Exception):
    """A cache directory or file fails the ownership checks (or cannot be opened)."""


# -- opening what we trust: descriptors, checked after opening -------------------------


def _check(fd: int, path, kind: int, private: bool = False) -> os.stat_result:
    """Check an open descriptor: its type, that this user owns it, and that no one else
    can write it (with `private`, nor read it)."""
    st = os.fstat(fd)
    if stat.S_IFMT(st.st_mode) != kind:
        what = "a directory" if kind == stat.S_IFDIR else "a regular file"
        raise UnsafeCacheError(f"{path} is not {what}")
    if st.st_uid != os.geteuid():
        raise UnsafeCacheError(f"{path} is owned by another user (uid {st.st_uid})")
    mask = 0o077 if private else 0o022
    if st.st_mode & mask:
        who = "accessible to" if private else "writable by"
        raise UnsafeCacheError(f"{path} is {who} group or others "
                               f"(mode {st.st_mode & 0o777:o})")
    return st


def open_checked(name: str, dir_fd: int | None, path, kind: int,
                 private: bool = False) -> int:
    """Open `name` (relative to `dir_fd`) without following a symbolic link, then check
    the descriptor; the caller reads or lists through it, never through the path again."""
    flags = _DIR_FLAGS if kind == stat.S_IFDIR else _READ_FLAGS
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as e:
        # O_NOFOLLOW refuses a link: ELOOP, or ENOTDIR with O_DIRECTORY; lstat says which
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            raise UnsafeCacheError(f"{path} is a symbolic link" if link else
                                   f"{path}: {e.strerror}") from None
        raise
    try:
        _check(fd, path, kind, private)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir(name: str, dir_fd: int | None, path, create: bool) -> int:
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    return open_checked(name, dir_fd, path, stat.S_IFDIR)


def open_ancestor(path: Path) -> int:
    """Open the directory `path`, following links: the cache root's ancestors are resolved
    once, here; from the root down nothing is followed and every level is checked."""
    return os.open(path, _DIR_FLAGS & ~_O_NOFOLLOW)


def write_atomic(dir_fd: int, name: str, data: bytes, replace: bool = True):
    """Write a temporary file in the directory `dir_fd` and rename it to `name` (with
    `replace=False`, link it, so that an existing `name` wins)."""
    tmp = f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}{ENTRY_SUFFIX}"
    fd = os.open(tmp, _CREATE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if replace:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                pass
            os.unlink(tmp, dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


_SECRETS: dict = {}


def user_secret(root_fd: int, root: Path, create: bool) -> bytes:
    """The user's key for authenticating entries: `<root>/secret`, random, mode 0600,
    made on first use. Remembered for the process by the file's identity (device, inode,
    change time: a chmod or chown changes it), so that it is read and checked once."""
    try:
        st = os.stat(_SECRET, dir_fd=root_fd, follow_symlinks=False)
        known = _SECRETS.get((st.st_dev, st.st_ino, st.st_ctime_ns))
        if known is not None:
            return known
    except FileNotFoundError:
        pass
    path = root / _SECRET
    for attempt in range(2):
        try:
            fd = open_checked(_SECRET, root_fd, path, stat.S_IFREG, private=True)
        except FileNotFoundError:
            if not create or attempt:
                raise
            # link, not rename: when two processes race, the first secret stays
            write_atomic(root_fd, _SECRET, os.urandom(_SECRET_BYTES), replace=False)
            continue
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            secret = f.read(_SECRET_BYTES + 1)
        if len(secret) != _SECRET_BYTES:
            raise UnsafeCacheError(f"{path} is not an s2sad cache secret "
                                   f"({len(secret)} bytes); remove it")
        _SECRETS[(st.st_dev, st.st_ino, st.st_ctime_ns)] = secret
        return secret
    raise AssertionError("unreachable")

"""Atomic writes (temp file + rename) and checksums, so a crash never leaves half a file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from chemassay.contract.errors import UserInputError, describe_os_error
from chemassay.contract.files import (  # noqa: F401 - re-exported: their public home
    atomic_write_bytes,
    atomic_write_text,
    atomic_writer,
    plain_file_mode,
    sha256_file,
)


def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ensure_writable(path: str | os.PathLike, what: str = "output") -> Path:
    """Check, before any work, that ``path`` can be written (its folder exists or can be
    created, and a file can be created there); raise :class:`UserInputError` naming the file.

    Commands call this first so that an unwritable ``--out`` fails at once rather than after
    the whole computation.
    """
    target = Path(path)
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory; give a file name for the {what}")
    folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserInputError(f"cannot write the {what} {target}: {describe_os_error(exc)}") from None
    if target.exists() and not os.access(target, os.W_OK):
        raise UserInputError(f"cannot write the {what} {target}: it exists and is read-only")
    return target


def ensure_writable_dir(path: str | os.PathLike, what: str = "output folder") -> Path:
    """Like :func:`ensure_writable` for a folder a command will fill."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UserInputError(f"{target}: exists and is not a folder; give a folder for the {what}")
    if target.is_symlink() and not target.exists():
        raise UserInputError(f"{target}: a link to a folder that does not exist ({os.readlink(target)}); "
                             f"remove it or give another {what}")
    try:
        target.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=target)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserInputError(f"cannot write the {what} {target}: {describe_os_error(exc)}") from None
    return target


def need_file(path: str | os.PathLike, what: str = "input") -> Path:
    """``path`` as a Path if it is an existing file, else a one-line user error naming it."""
    from chemassay.contract.errors import UserInputError

    target = Path(path)
    kind = f"{what} file" if what else "file"
    if not target.exists():
        raise UserInputError(f"{target}: no such {kind}")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a {kind}")
    return target


def writable_out(path: str | os.PathLike | None, what: str = "output") -> Path | None:
    """Check an output path is writable before any work (``None`` passes through)."""
    return None if path is None else ensure_writable(path, what)

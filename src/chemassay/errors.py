"""Error types shared by every part of chemassay.

``UserInputError`` (and its subclasses) mark problems the user can fix: a missing file,
a wrong format, an unknown column. The CLI turns them into a one-line message and exit
code 2; everything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class ChemassayError(Exception):
    """Base class of every error chemassay raises on purpose."""


class UserInputError(ChemassayError):
    """An unusable input: the message names the file (or option) and the fix."""

    exit_code = 2


class MissingDependencyError(UserInputError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, extra: str, purpose: str = "") -> None:
        self.module = module
        self.extra = extra
        what = f" for {purpose}" if purpose else ""
        super().__init__(
            f"the optional dependency '{module}' is needed{what}: "
            f"pip install 'chemassay[{extra}]'"
        )


class ChecksumError(UserInputError):
    """A file's sha256 differs from the registered one."""

    def __init__(self, path: str, expected: str, actual: str, hint: str = "") -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        super().__init__(f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}" + (f"; {hint}" if hint else ""))


def require(module: str, extra: str, purpose: str = ""):
    """Import an optional module or raise :class:`MissingDependencyError` naming its extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(module, extra, purpose) from exc


def describe_os_error(exc: OSError) -> str:
    """One line for an operating-system error: the file, what went wrong, and a fix."""
    import errno

    path = exc.filename or ""
    reason = exc.strerror or str(exc)
    fixes = {
        errno.EACCES: "check its permissions or choose another location",
        errno.EPERM: "check its permissions or choose another location",
        errno.EROFS: "the filesystem is read-only: choose another location",
        errno.ENOSPC: "the disk is full: free space or choose another location",
        errno.ENOENT: "check the path",
        errno.EISDIR: "give a file, not a directory",
    }
    fix = fixes.get(exc.errno or -1, "")
    where = f"{path}: " if path else ""
    return f"{where}{reason}" + (f" ({fix})" if fix else "")

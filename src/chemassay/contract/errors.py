"""Error types shared by every part of chemassay.

``UserInputError`` (and its subclasses) mark problems the user can fix: a missing file,
a wrong format, an unknown column. The CLI turns them into a one-line message and exit
code 2; everything else is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = [
    "ChecksumError", "ChemassayError", "MissingDependencyError", "UserInputError", "describe_os_error",
    "require",
]


class ChemassayError(Exception):
    """Base class of every error chemassay raises on purpose."""


class UserInputError(ChemassayError):
    """An unusable input: the message names the file (or option) and the fix."""

    exit_code = 2


class MissingDependencyError(UserInputError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, extra: str, purpose: str = "", broken: str | None = None) -> None:
        self.module = module
        self.extra = extra
        what = f" for {purpose}" if purpose else ""
        if broken:  # installed (e.g. with --no-deps) but its own imports fail
            super().__init__(
                f"'{module}' is installed but cannot be imported ({broken}), so it cannot be used{what}; "
                f"install it with its dependencies: pip install 'chemassay[{extra}]'"
            )
        else:
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
    import importlib.util

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        found = exc.name != module and importlib.util.find_spec(module.split(".")[0]) is not None
        raise MissingDependencyError(module, extra, purpose, broken=str(exc) if found else None) from exc


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

"""The exceptions lowbit raises. Every one carries lowbit's own message (the dtype, the value, the
position that is wrong); the native module picks the class from the kind of error."""

from __future__ import annotations


class Error(ValueError):
    """Any error lowbit reports about its input: the base of the classes below (a ValueError)."""


class DTypeError(Error, TypeError):
    """An unknown dtype name or number, a dtype the operation does not take, a bad format
    description, or bits that do not fit a format (also a TypeError, as numpy's own)."""


class ShapeError(Error):
    """A buffer or a shape that does not hold the elements it should."""


class ParseError(Error):
    """A string that does not read as a number of the target dtype, or a line of a dump that does
    not read."""


class FileError(Error, OSError):
    """A file that cannot be read (also an OSError)."""


class InternalError(RuntimeError):
    """A bug in lowbit: a panic caught at the boundary instead of crossing into Python."""


__all__ = ["Error", "DTypeError", "ShapeError", "ParseError", "FileError", "InternalError"]

"""The exceptions: one base class, each also the built-in exception a Python user expects."""


class Error(Exception):
    """Every error tensor_scatter raises. Nothing was written when it is raised."""


class OutOfRangeError(Error, IndexError):
    """An index outside the accepted range (the message names the argument, the position
    and the value)."""


class DTypeError(Error, TypeError):
    """An unsupported dtype, or arguments whose dtypes do not match."""


class ArgumentError(Error, ValueError):
    """A shape, rank, axis or option the operator does not accept."""


class OutOfMemoryError(Error, MemoryError):
    """An output or a copy that cannot be allocated."""

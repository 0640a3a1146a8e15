"""The exceptions: one base class, each also the built-in exception a Python user expects.
They print as ``tensor_scatter.X`` (their ``__module__``), the name a user imports them by."""


class Error(Exception):
    """Every error tensor_scatter raises. Nothing was written when it is raised."""


class OutOfRangeError(Error, IndexError):
    """An index outside the accepted range (the message names the argument, the position
    and the value)."""


class DTypeError(Error, TypeError):
    """An unsupported dtype, or arguments whose dtypes do not match."""


class ArgumentError(Error, ValueError):
    """A shape, rank, axis or option the operator does not accept."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of a type the operator does not take (a float ``axis``, a string where a
    bool belongs): an :class:`ArgumentError` that is also the ``TypeError`` Python raises."""


class OutOfMemoryError(Error, MemoryError):
    """An output or a copy that cannot be allocated."""


for _cls in (Error, OutOfRangeError, DTypeError, ArgumentError, ArgumentTypeError, OutOfMemoryError):
    _cls.__module__ = "tensor_scatter"
del _cls

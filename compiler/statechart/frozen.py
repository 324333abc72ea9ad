"""A faster `__init__` for the model's frozen dataclasses, the objects `check` makes by the
hundred thousand (a span per key, a transition per alternative).

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__`, one
call per field: building a 28-field `Transition` took about 10 µs, a tenth of a 10,000-state
check spent on it alone. `fast_init` gives the class an `__init__` with the same signature
that fills the instance's `__dict__` in one call (about 1 µs). Everything else stays the
dataclass's: the class is still frozen (assigning a field raises `FrozenInstanceError`),
compares, hashes, orders and prints as before, and `dataclasses.replace` goes through the new
`__init__` with the same arguments.
"""

from __future__ import annotations

import dataclasses
from types import FunctionType
from typing import TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """`cls` (a frozen dataclass without `__slots__`, `__post_init__`, keyword-only,
    init-less or factory-defaulted fields) with an `__init__` that sets every field at once."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (not dataclasses.is_dataclass(cls) or hasattr(cls, "__slots__")
            or hasattr(cls, "__post_init__")
            or any(not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING
                   for f in fields)):
        raise TypeError(f"fast_init cannot build {cls.__name__}'s __init__")
    defaults = {f"_default_{f.name}": f.default for f in fields
                if f.default is not dataclasses.MISSING}
    params = ", ".join(f.name if f.default is dataclasses.MISSING else
                       f"{f.name}=_default_{f.name}" for f in fields)
    assigned = ", ".join(f"{f.name}={f.name}" for f in fields)
    # Field names are the class's own identifiers (dataclasses checked them), not data.
    code = f"def __init__(self, {params}):\n    self.__dict__.update({assigned})\n"
    namespace: dict[str, object] = dict(defaults)
    exec(code, namespace)
    init = namespace["__init__"]
    assert isinstance(init, FunctionType)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls

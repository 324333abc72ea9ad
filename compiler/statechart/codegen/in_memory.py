"""A spec's generated module, compiled and imported in memory: no file is written and nothing
is cached on disk (`statechart runs` needs a spec's Run class, not a build).

The module is the one `statechart build` would write (`python_module.outputs`), executed
under a unique module name so that two versions of one spec (`runs verify --spec-new`) live
side by side in one process.
"""

from __future__ import annotations

import itertools
import sys
from types import ModuleType
from typing import Any

from statechart.codegen import python_module
from statechart.model import Spec

_numbers = itertools.count(1)


def run_module(spec: Spec) -> ModuleType:
    """The generated module of `spec`, imported as `_statechart_mem_NAME_N`."""
    source = python_module.outputs(spec)[f"generated/{spec.name}.py"]
    name = f"_statechart_mem_{spec.name}_{next(_numbers)}"
    module = ModuleType(name)
    module.__file__ = f"<generated from {spec.path}>"
    # Dataclasses look their module up in sys.modules while building the record class.
    sys.modules[name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def run_class(spec: Spec) -> type[Any]:
    """The Run facade class (`AgentRun`) of `spec`, compiled in memory."""
    module = run_module(spec)
    return getattr(module, str(python_module.class_names(spec)["facade"]))  # type: ignore[no-any-return]

"""The python-statemachine adapter: the only package of the runtime that imports `statemachine`
(tests/test_runtime_layout.py checks it).

- `machine`: the generated `Machine` base class and the direct guard path;
- `library`: the library releases supported and the internals the runtime relies on (importing
  it imports nothing of the library);
- `names`: the library's public names the rest of the runtime uses.
"""

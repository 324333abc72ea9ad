"""Generate the run store's synchronous code from its asynchronous source (issue 26; as
psycopg's tools/async_to_sync.py does): one source of truth for both APIs.

    python tools/async_to_sync.py          # write the synchronous modules
    python tools/async_to_sync.py --check  # exit 1 if one is not what the source gives

The transform, on the source's syntax tree: `async def` -> `def`, `await x` -> `x`,
`async with`/`async for` -> `with`/`for`, `Awaitable[T]` -> `T`, the names of `NAMES`
(`AsyncRunStore` -> `RunStore`, `threaded` -> `sqlite3`, `asyncio.sleep` -> `time.sleep`,
...), `if is_async(): A else: B` -> `B` (and `if not is_async(): B` -> `B`), the methods of
`ASYNC_ONLY` (the pool's) dropped, then every import left unused. Comments are not kept
(the source has them); docstrings are.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / "runtime" / "statechart_runtime" / "store"
# (source, generated), relative to the store package.
FILES = [("_async/transactions.py", "_sync/transactions.py"),
         ("_async/run_calls.py", "_sync/run_calls.py"),
         ("_async/work_calls.py", "_sync/work_calls.py"),
         ("_async/run_store.py", "_sync/run_store.py"),
         ("sqlite/_async.py", "sqlite/_sync.py"),
         ("postgres/_async.py", "postgres/_sync.py")]
NAMES = {
    "AsyncRunStore": "RunStore",
    "AsyncSqliteStore": "SqliteStore",
    "AsyncPostgresStore": "PostgresStore",
    "AsyncConnection": "Connection",
    "AsyncIterator": "Iterator",
    "asynccontextmanager": "contextmanager",
    # The asynchronous SQLite store's connection (a thread each): sqlite3 itself.
    "threaded": "sqlite3",
    "asyncio": "time",  # asyncio.sleep -> time.sleep: the only use of asyncio there
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "statechart_runtime.store._async.run_store": "statechart_runtime.store._sync.run_store",
    "statechart_runtime.store._async.transactions": "statechart_runtime.store._sync.transactions",
    "statechart_runtime.store._async.run_calls": "statechart_runtime.store._sync.run_calls",
    "statechart_runtime.store._async.work_calls": "statechart_runtime.store._sync.work_calls",
}
# Methods of the asynchronous store only (its pool of connections).
ASYNC_ONLY = {"_take_pooled", "_give_back_pooled", "_open_pool", "_close_pool", "_refresh_pool",
              "_give_back_last"}


def _is_async_test(test: ast.expr) -> bool | None:
    """True for `is_async()`, False for `not is_async()`, None for anything else."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) \
            and test.func.id == "is_async":
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _is_async_test(test.operand)
        return None if inner is None else not inner
    return None


class _ToSync(ast.NodeTransformer):
    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(ast.FunctionDef(
            name=NAMES.get(node.name, node.name), args=node.args, body=node.body,
            decorator_list=node.decorator_list, returns=node.returns,
            type_comment=node.type_comment, type_params=getattr(node, "type_params", [])),
            node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.name = NAMES.get(node.name, node.name)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.body = [item for item in node.body if not (
            isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            and item.name in ASYNC_ONLY)]
        self.generic_visit(node)
        node.name = NAMES.get(node.name, node.name)
        return node

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.visit(node.value)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(ast.With(items=node.items, body=node.body,
                                          type_comment=node.type_comment), node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(ast.For(target=node.target, iter=node.iter, body=node.body,
                                         orelse=node.orelse, type_comment=node.type_comment),
                                 node)

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        branch = _is_async_test(node.test)
        if branch is None:
            self.generic_visit(node)
            return node
        kept = node.orelse if branch else node.body
        out: list[ast.stmt] = []
        for statement in kept:
            done = self.visit(statement)
            out.extend(done if isinstance(done, list) else [done])
        return out or [ast.Pass()]

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "Awaitable":
            return node.slice
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = NAMES.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = NAMES.get(node.attr, node.attr)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        node.module = NAMES.get(node.module or "", node.module)
        for alias in node.names:
            alias.name = NAMES.get(alias.name, alias.name)
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            alias.name = NAMES.get(alias.name, alias.name)
        return node


def _used_names(tree: ast.Module) -> set[str]:
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for n in ast.walk(tree):  # names only in __all__ count too
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            used.add(n.value)
    return used


def _drop_unused_imports(tree: ast.Module) -> None:
    used = _used_names(tree)
    body: list[ast.stmt] = []
    seen: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom) and not (
                isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
            names = []
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound in used and bound not in seen:
                    names.append(alias)
                    seen.add(bound)
            if not names:
                continue
            statement.names = names
        body.append(statement)
    tree.body = body


def generate(source: Path, relative: str) -> str:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    tree = _ToSync().visit(tree)
    _drop_unused_imports(tree)
    first = tree.body[0]
    summary = ""
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        summary = first.value.value.split("\n\n")[0].strip()
        tree.body = tree.body[1:]
    doc = (f"{summary}\n\nThe synchronous driver, generated from store/{relative} by "
           "tools/async_to_sync.py:\nDO NOT EDIT (edit the source, then run the script).\n")
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree)
    header = ("# generated by tools/async_to_sync.py from "
              f"runtime/statechart_runtime/store/{relative}: DO NOT EDIT\n")
    return f'{header}"""{doc}"""\n' + text + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a generated module is not what its source gives")
    args = parser.parse_args(argv)
    stale = []
    for source, target in FILES:
        text = generate(STORE / source, source)
        path = STORE / target
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(target)
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)  # atomically
            print(f"wrote store/{target}")
    if stale:
        print("stale (run python tools/async_to_sync.py): "
              + ", ".join(f"store/{t}" for t in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a driver's failure means to a caller: the StoreError (and its kinds) for each kind a
backend names (`failure(exc)`: "busy", "disconnected", "duplicate", "full", "unstorable",
"damaged"), with a message that says what to do. No I/O, no driver: the backends classify,
this module words."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable

from statechart_runtime.errors import (
    OutcomeUnknown,
    PoolExhausted,
    ReadOnlyStore,
    SchemaProblem,
    StoreError,
    StoreFull,
    StoreUnavailable,
    UnstorableValue,
)

# What to say about a database server the store could not reach.
UNREACHABLE_HINT = "is the server running? Repeat the call when it is back"
# The kinds of failure that are the store's own, not of the one run a call was about.
STORE_KINDS = ("busy", "disconnected", "full", "damaged")


def first_line(exc: BaseException) -> str:
    """A driver's message without its DETAIL and HINT lines (they may quote a whole value)."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def store_error(where: str, exc: BaseException, kind: str | None, *, committing: bool,
                max_attempts: int, duplicate: Callable[[], StoreError] | None) -> StoreError:
    """The StoreError a caller sees for a driver's `exc` of `kind`, after the transaction
    was rolled back (`committing`: the failure came while committing)."""
    unknown = " (the connection was lost while committing: load the run to see " \
              "whether it was stored)" if committing else ""
    reason = first_line(exc)
    if kind == "duplicate" and duplicate is not None:
        return duplicate()
    if kind == "busy":
        return StoreError(f"{where}: the database stayed busy through {max_attempts} "
                          f"attempts ({reason}): nothing was stored; repeat the call later, "
                          "or raise `timeout`")
    if kind == "damaged":
        return StoreError(f"{where} is not a run store, or is damaged ({reason}): "
                          "restore it from a backup")
    if kind == "full":
        return StoreFull(f"{where}: the database is full ({reason}): nothing of this call "
                         "was stored; free space (or raise the database's size limit), then "
                         "repeat the call")
    if kind == "unstorable":
        return UnstorableValue(
            f"{where}: a value of this call cannot be stored ({reason}): nothing was "
            "stored; change the value (strings must be valid Unicode, without lone "
            "surrogates; PostgreSQL also refuses NUL characters, and keys such as a run "
            "id over about 2,700 bytes)")
    return StoreError(f"{where}: the database refused the call ({reason}); the "
                      f"transaction was rolled back{unknown}")


def outcome_unknown(where: str, exc: BaseException) -> OutcomeUnknown:
    return OutcomeUnknown(
        f"{where}: the connection was lost while committing, so whether the change was "
        "stored is unknown: load the run to see, and fire with an idempotency_key to make "
        f"retries safe ({first_line(exc)})")


def kept_failing(where: str, timeout: float, exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(
        f"{where}: the connection kept failing for {timeout:g} s ({first_line(exc)}); "
        "repeat the call when the database is back")


def cannot_reconnect(where: str, timeout: float, exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(
        f"{where}: lost the connection and could not reconnect within {timeout:g} s "
        f"({first_line(exc)}); repeat the call when the database is back: the store "
        "reconnects by itself")


def unreachable(where: str, exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(f"{where}: cannot reach the database ({first_line(exc)}): "
                            f"{UNREACHABLE_HINT}")


def closed(where: str) -> StoreError:
    """The error of a call to a store after its `close()`."""
    return StoreError(f"{where}: the store is closed: nothing was done; open it again "
                      "(open_store, open_async_store)")


def cannot_open(where: str, exc: BaseException) -> StoreError:
    return StoreError(f"{where}: cannot open the run store: {exc}")


def pool_exhausted(where: str, size: int, timeout: float) -> PoolExhausted:
    return PoolExhausted(
        f"{where}: none of the pool's {size} connections was free within {timeout:g} s: "
        "nothing of this call was done; repeat it, give the store a larger pool "
        "(open_async_store(..., pool_size=N)) or run fewer calls at once")


def store_failed(exc: BaseException, kind_of: Callable[[BaseException], str | None],
                 driver_errors: tuple[type[BaseException], ...]) -> bool:
    """Whether `exc` is a failure of the store itself (busy, unreachable, full, damaged, an
    unknown outcome, its schema), not of the one run a call was about."""
    if isinstance(exc, (OutcomeUnknown, StoreUnavailable, StoreFull, SchemaProblem,
                        ReadOnlyStore)):
        return True
    driver = exc if isinstance(exc, driver_errors) else exc.__cause__
    return isinstance(driver, driver_errors) and kind_of(driver) in STORE_KINDS


class BlockingInEventLoop(RuntimeWarning):
    """The synchronous run store was called inside a running asyncio event loop."""


def warn_in_event_loop(where: str, warned: set[str]) -> None:
    """The synchronous store blocks: inside a running event loop each of its calls stalls
    every task of the loop. Said once per store (`warned`), as a warning rather than an
    error: a loop may run in a thread without being blocked by it (a greenlet-driven
    library's, such as playwright's synchronous API), and a thread without a loop
    (asyncio.to_thread's) is where the synchronous store belongs."""
    if "loop" in warned:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    warned.add("loop")
    warnings.warn(f"{where}: the synchronous run store was called inside a running asyncio "
                  "event loop, which it blocks on every call: use `await "
                  "open_async_store(url)` (its calls are coroutines), or call this store "
                  "in a thread of its own (asyncio.to_thread)", BlockingInEventLoop,
                  stacklevel=4)

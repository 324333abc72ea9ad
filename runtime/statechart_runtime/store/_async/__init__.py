"""The run store's asynchronous API, the source the synchronous one is generated from
(tools/async_to_sync.py)."""


def is_async() -> bool:
    """True here; `if is_async():` branches are dropped from the generated synchronous
    code, and their `else:` kept."""
    return True

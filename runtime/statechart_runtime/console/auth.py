"""Who is asking: the console's authentication is a callable, given each request, that
answers with an `Identity` (who, and whether they may change runs), or None (not
authenticated: 401). What it answers is the only source of the name stored with a step
(`@by`, statechart_runtime.values.SENT_BY): never a form's or a header's field the callable
did not vouch for.

Built in:
- `basic_auth(users)`: HTTP basic, users and passwords given (`basic_auth_from_env()` reads
  them from the environment: `STATECHART_CONSOLE_USERS=alice:secret,bob:other`);
- `trusted_header("X-Forwarded-User")`: the name an authenticating proxy (oauth2-proxy and
  the like) puts in a header, believed only from the proxy's addresses.
Without a callable (`auth=None`) the console answers loopback clients only, as `local`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hmac
import inspect
import os
from collections.abc import Awaitable, Callable, Collection, Mapping

from starlette.requests import HTTPConnection

from statechart_runtime.errors import AuthConfigError, StatechartError


@dataclasses.dataclass(frozen=True, slots=True)
class Identity:
    """Who is asking (`name`, stored with the steps they send), and whether they may change
    runs (`can_write`: else 403 on every change)."""

    name: str
    can_write: bool = True


# What `app(..., auth=...)` takes: a request in, an Identity (or None: not authenticated)
# out, sync or async.
Auth = Callable[[HTTPConnection], Identity | Awaitable[Identity | None] | None]
# Loopback addresses: the only clients of a console without authentication, and the
# default addresses a trusted header is believed from.
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


class Unauthenticated(StatechartError):
    """No identity: the response is 401, with `challenge` as its WWW-Authenticate header."""

    def __init__(self, message: str, challenge: str | None = None) -> None:
        super().__init__(message)
        self.challenge = challenge


async def identify(auth: Auth | None, request: HTTPConnection) -> Identity:
    """The identity of the request's sender; Unauthenticated when there is none."""
    if auth is None:
        host = request.client.host if request.client else ""
        if host not in LOOPBACK:
            raise Unauthenticated("this console has no authentication and answers loopback "
                                  "clients only")
        return Identity("local")
    found = auth(request)
    if inspect.isawaitable(found):
        found = await found
    if found is None:
        raise Unauthenticated("authentication required",
                              getattr(auth, "challenge", None))
    if not isinstance(found, Identity):
        raise TypeError(f"the console's auth callable returned {found!r}, not an Identity "
                        "or None")
    return found


class BasicAuth:
    """HTTP basic authentication against `users` (name -> password, compared in constant
    time); names in `readers` may read but not change runs."""

    def __init__(self, users: Mapping[str, str], *, readers: Collection[str] = (),
                 realm: str = "statechart console") -> None:
        if not users:
            raise AuthConfigError("basic authentication needs at least one user")
        self.users = {name: password.encode("utf-8") for name, password in users.items()}
        self.readers = frozenset(readers)
        self.challenge = f'Basic realm="{realm}", charset="UTF-8"'

    def __call__(self, request: HTTPConnection) -> Identity | None:
        header = request.headers.get("authorization", "")
        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            name, sep, password = base64.b64decode(encoded, validate=True).decode(
                "utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        expected = self.users.get(name)
        # Compared even for an unknown name, so the time does not tell which names exist.
        ok = hmac.compare_digest(password.encode("utf-8"), expected or b"\0" * 16)
        if not sep or expected is None or not ok:
            return None
        return Identity(name, can_write=name not in self.readers)


def basic_auth(users: Mapping[str, str], *, readers: Collection[str] = ()) -> BasicAuth:
    """HTTP basic authentication for `users` (name -> password)."""
    return BasicAuth(users, readers=readers)


def users_from_text(text: str, what: str) -> dict[str, str]:
    """`alice:secret,bob:other` (or one per line) as name -> password."""
    users: dict[str, str] = {}
    for item in text.replace("\n", ",").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, password = item.partition(":")
        if not sep or not name or not password:
            raise AuthConfigError(f"{what}: expected NAME:PASSWORD items separated by commas, "
                                  f"got {name or item[:1] + '...'!r}")
        users[name] = password
    return users


def basic_auth_from_env(variable: str = "STATECHART_CONSOLE_USERS", *,
                        readers_variable: str = "STATECHART_CONSOLE_READERS") -> BasicAuth:
    """HTTP basic authentication for the users of the environment variable `variable`
    (`alice:secret,bob:other`); the names in `readers_variable` (`carol,dave`) only read."""
    text = os.environ.get(variable, "")
    users = users_from_text(text, variable)
    if not users:
        raise AuthConfigError(f"{variable} names no users (NAME:PASSWORD,...)")
    readers = [n.strip() for n in os.environ.get(readers_variable, "").split(",") if n.strip()]
    return BasicAuth(users, readers=readers)


class TrustedHeader:
    """The user an authenticating proxy names in `header`, believed only when the request
    comes from one of `proxies` (addresses; default loopback): a client that reaches the
    console past the proxy cannot name itself."""

    def __init__(self, header: str = "X-Forwarded-User", *,
                 proxies: Collection[str] = LOOPBACK, readers: Collection[str] = ()) -> None:
        self.header = header
        self.proxies = frozenset(proxies)
        self.readers = frozenset(readers)

    def __call__(self, request: HTTPConnection) -> Identity | None:
        host = request.client.host if request.client else ""
        name = request.headers.get(self.header, "").strip()
        if host not in self.proxies or not name:
            return None
        return Identity(name, can_write=name not in self.readers)


def trusted_header(header: str = "X-Forwarded-User", *, proxies: Collection[str] = LOOPBACK,
                   readers: Collection[str] = ()) -> TrustedHeader:
    """The identity an authenticating proxy puts in `header` (oauth2-proxy:
    `X-Forwarded-User` or `X-Forwarded-Email`), from the proxy's addresses only."""
    return TrustedHeader(header, proxies=proxies, readers=readers)

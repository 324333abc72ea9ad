"""The console's browser protections: response headers on every response (a
Content-Security-Policy whose scripts need the response's nonce, nosniff, Referrer-Policy,
no framing, no caching), and CSRF protection of the pages' forms by a double-submit cookie
(the form's `_csrf` field must equal the `sc_csrf` cookie, which another site can neither
read nor set). The JSON API takes only `application/json` bodies, which a page of another
site cannot send without a CORS preflight the console never answers.
"""

from __future__ import annotations

import hmac
import secrets

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "sc_csrf"
CSRF_FIELD = "_csrf"


def csp(nonce: str) -> str:
    """Scripts: only the console's own, carrying the response's nonce; styles and images
    from the console; no plugins, frames, or forms sent elsewhere."""
    return (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'self'; "
            "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'")


class SecurityHeaders:
    """ASGI middleware: a fresh nonce per request (`scope["state"]["nonce"]`, for the
    templates) and the headers above on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"content-security-policy", csp(nonce).encode("ascii")),
                            (b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"no-referrer"),
                            (b"x-frame-options", b"DENY"),
                            (b"cache-control", b"no-store")]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def csrf_token(request: Request) -> str:
    """The request's CSRF token: its cookie's, or a new one (`set_csrf_cookie` sends it)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if len(token) < 20:
        token = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = token
    return token


def set_csrf_cookie(request: Request, response: Response) -> None:
    new = getattr(request.state, "new_csrf", None)
    if new:
        response.set_cookie(CSRF_COOKIE, new, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https", path="/")


def csrf_ok(request: Request, form_token: object) -> bool:
    """Whether a form's token is the cookie's (double submit), compared in constant time."""
    cookie = request.cookies.get(CSRF_COOKIE, "")
    return isinstance(form_token, str) and len(cookie) >= 20 and hmac.compare_digest(
        cookie.encode("utf-8"), form_token.encode("utf-8"))

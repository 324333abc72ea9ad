"""`statechart runs serve --store URL [--spec SPEC ...] [--host H] [--port P]`: the run console
(statechart_runtime.console; docs/console.md) over a store, served by uvicorn: the runs list,
run pages with the spec's diagram (the active configuration highlighted, as `statechart
render --highlight` draws it), the inbox and the JSON API.

Authentication: `--auth basic` (users from STATECHART_CONSOLE_USERS, `name:password,...`),
`--auth header` (the user an authenticating proxy names, from --trusted-proxy addresses), or
none, the default when STATECHART_CONSOLE_USERS is unset: then the console binds to loopback
only, and says so. `--metrics`: the runs' Prometheus metrics at `/metrics` (the `otel`
extra; docs/observability.md). Needs the `console` extra.
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import os
import re
import sys
from pathlib import Path
from typing import Any

from statechart.report import inert

_LOOPBACK_NAMES = {"localhost"}


def add_arguments(actions: Any, store_argument: Any) -> None:
    p = actions.add_parser("serve", help="the run console: runs, inbox, answers, JSON API",
                           description="Serve the run console over a store: the runs list, "
                           "run pages with the highlighted diagram, the approval inbox and "
                           "the JSON API (/api/openapi.json). Without authentication it "
                           "binds to loopback only.")
    store_argument(p)
    p.add_argument("--spec", metavar="SPEC", action="append", default=[],
                   help="a spec whose runs the console reads and answers (repeatable; "
                   "default: the project configuration's spec files)")
    p.add_argument("--host", default="127.0.0.1", help="the address to bind (default: "
                   "127.0.0.1; another one needs --auth)")
    p.add_argument("--port", type=int, default=8000, help="the port (default: 8000)")
    p.add_argument("--auth", choices=("basic", "header", "none"), default=None,
                   help="basic: HTTP basic, users from STATECHART_CONSOLE_USERS "
                   "(name:password,...; STATECHART_CONSOLE_READERS: names that only read); "
                   "header: the user an authenticating proxy names in --auth-header; none: "
                   "loopback only (default: basic when STATECHART_CONSOLE_USERS is set, "
                   "else none)")
    p.add_argument("--auth-header", default="X-Forwarded-User", metavar="HEADER",
                   help="with --auth header: the header that names the user "
                   "(default: X-Forwarded-User)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="with --auth header: an address of the proxy (repeatable; default: "
                   "loopback)")
    p.add_argument("--read-only", action="store_true",
                   help="no answers, no bulk cancel; the store is opened read-only")
    p.add_argument("--listener", metavar="MODULE:OBJECT", action="append", default=[],
                   help="told of the answers and of the steps and refusals they make "
                        "(docs/observability.md; repeatable)")
    p.add_argument("--metrics", action="store_true",
                   help="serve the runs' metrics at /metrics, Prometheus text "
                        "(docs/observability.md; the `otel` extra)")


def serve(args: argparse.Namespace) -> int:
    from statechart.cli.runs import Failure, Usage, open_existing

    try:
        import uvicorn

        from statechart_runtime import console
        from statechart_runtime.errors import AuthConfigError
    except ImportError as exc:
        raise Failure(f"the console needs the `console` extra ({exc.name} is missing): pip "
                      "install 'statechart-compiler[console]'") from None
    method = args.auth or ("basic" if os.environ.get("STATECHART_CONSOLE_USERS") else "none")
    if method == "none" and not _loopback(args.host):
        raise Usage(f"--host {args.host}: without authentication the console binds to "
                    "loopback only (127.0.0.1, ::1); give --auth basic or --auth header")
    if not 0 < args.port < 65536:
        raise Usage(f"--port {args.port}: expected 1 to 65535")
    try:
        auth = None if method == "none" else console.basic_auth_from_env() \
            if method == "basic" else console.trusted_header(
                args.auth_header, proxies=args.trusted_proxy or console.auth.LOOPBACK)
    except AuthConfigError as exc:
        raise Usage(str(exc)) from None
    from statechart.cli.runs_work import listeners_of

    listeners = listeners_of(args.listener)
    specs = _specs(args)
    classes = [_compiled(spec) for spec in specs]
    open_existing(args.store, read_only=args.read_only).close()  # it must exist: say so now
    by_name = {spec.name: spec for spec in specs}
    try:
        asgi = console.app(args.store, classes, auth=auth, read_only=args.read_only,
                           diagram=functools.partial(_diagram, by_name), metrics=args.metrics,
                           listeners=listeners)
    except ImportError as exc:
        raise Failure(f"--metrics needs the `otel` extra ({exc.name} is missing): pip "
                      "install 'statechart-compiler[otel]'") from None
    where = f"http://{args.host}:{args.port}" if ":" not in args.host \
        else f"http://[{args.host}]:{args.port}"
    said = {"none": "no authentication: loopback clients only",
            "basic": "HTTP basic authentication (STATECHART_CONSOLE_USERS)",
            "header": f"the user named by {args.auth_header} from "
                      f"{', '.join(args.trusted_proxy) or 'loopback'}"}[method]
    print(inert(f"statechart runs serve: {where} over {_shown(args.store)} for "
                f"{', '.join(sorted(by_name)) or 'no spec'} ({said}"
                f"{'; read-only' if args.read_only else ''})"), file=sys.stderr, flush=True)
    served: Any = asgi
    if method == "none":
        # Loopback only is not enough without authentication: a page elsewhere whose name
        # resolves to 127.0.0.1 (DNS rebinding) would be same-origin with the console. So
        # only requests naming a loopback host are served. Starlette compares the Host
        # header without its port; before 0.47 it cut "[::1]:8000" to "[" (an IP literal,
        # which no rebinding name can be).
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        served = TrustedHostMiddleware(asgi, allowed_hosts=[
            "127.0.0.1", "localhost", "[::1]", "[", args.host, f"[{args.host}]"])
    # proxy_headers=False: the client address is the connection's, never X-Forwarded-For (the
    # trusted-header authentication believes its header only from the proxy's own address).
    # timeout_graceful_shutdown: the run pages' event streams (/api/changes) never end by
    # themselves; on Ctrl-C or SIGTERM they are closed after 3 s (a browser reconnects).
    uvicorn.run(served, host=args.host, port=args.port, log_level="warning",
                proxy_headers=False, timeout_graceful_shutdown=3)
    return 0


def _shown(url: str) -> str:
    from statechart.cli.runs import location

    return location(url)


def _loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _specs(args: argparse.Namespace) -> list[Any]:
    from statechart.cli.runs import Usage, checked_spec
    from statechart.config import ConfigError, load
    from statechart.linter import check_file, spec_files

    if args.spec:
        return [checked_spec(path, args) for path in args.spec]
    try:
        config = load()
    except ConfigError as exc:
        raise Usage(str(exc)) from None
    found: dict[str, Any] = {}
    for file in spec_files([p for p in config.spec_paths() if Path(p).exists()]):
        result = check_file(file, config)
        if result.spec is not None and not result.errors:
            found.setdefault(result.spec.name, result.spec)
    return list(found.values())


def _compiled(spec: Any) -> type[Any]:
    from statechart.cli.runs import compiled

    return compiled(spec)


# What an embedded diagram may not hold, whatever a spec's text says: the SVG comes from the
# compiler's renderer (its text escaped), and the page's CSP runs no script anyway.
_UNSAFE = re.compile(rb"<\s*(script|foreignObject|iframe|object|embed)\b|\bon[a-z]+\s*=",
                     re.IGNORECASE)


def _diagram(specs: dict[str, Any], run_class: type[Any], active: tuple[str, ...]
             ) -> str | None:
    """The spec's SVG with `active` highlighted (as `statechart render --highlight`), its
    header comments and XML prolog left out; None when it cannot be drawn (too large)."""
    from statechart.cli.render import render_bytes
    from statechart.render import bounds, layout
    from statechart.render.highlight import active_configuration
    from statechart_runtime.console.views import tables

    spec = specs.get(tables(run_class).name)
    if spec is None:
        return None
    try:
        with bounds.using() as limits:
            svg = render_bytes(spec, "svg", active_configuration(spec, list(active)),
                               "graphviz-pure", limits)
    except (bounds.BoundsError, layout.LayoutError):
        return None
    start = svg.find(b"<svg")
    body = re.sub(rb"<!--.*?-->", b"", svg[start:], flags=re.DOTALL) if start >= 0 else b""
    if not body or _UNSAFE.search(body):
        return None
    return body.decode("utf-8")

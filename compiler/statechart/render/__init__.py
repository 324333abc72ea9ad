"""Diagrams and generated docs: DOT, Mermaid, SVG/PNG layout, and the per-spec docs pages.

Every function here is pure (spec in, text or bytes out) except `layout`, which runs an
external `dot`-compatible program. Nothing prints; the CLI does.
"""

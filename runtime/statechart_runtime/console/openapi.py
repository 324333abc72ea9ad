"""The console API's OpenAPI 3.1 document, served at /api/openapi.json (tests check that
every route is in it and that the answers have the shapes it says)."""

from __future__ import annotations

from typing import Any


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json_body(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_PROBLEM = _json_body(_ref("Problem"), "refused: `error` says why, `message` what to do")
# What any call answers when the store fails: 503 `unavailable` (unreachable, busy past its
# timeout, no pooled connection free, an outcome unknown), 500 `store_error` (damaged, ...).
_STORE_FAILED = {"500": _PROBLEM, "503": _PROBLEM}
_RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"},
           "description": "the run id, one path segment: a `/` in it is sent as `%2F`"}
_TIME = {"type": ["string", "null"], "format": "date-time"}

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "statechart run console", "version": "1",
             "description": "Runs kept in a statechart run store: list them, read one and "
                            "its history, answer one (fire an event in your name)."},
    "components": {
        "securitySchemes": {"basic": {"type": "http", "scheme": "basic"}},
        "schemas": {
            "Problem": {"type": "object", "required": ["error", "message"], "properties": {
                "error": {"enum": ["invalid", "not_found", "no_event", "no_spec",
                                   "moved_on", "not_accepted", "refused", "read_only",
                                   "forbidden", "unauthenticated", "unsupported",
                                   "unavailable", "unreadable", "store_error"]},
                "message": {"type": "string"},
                "field": {"type": "string"},
                "run": _ref("Run")}},
            "RunSummary": {"type": "object", "properties": {
                "run_id": {"type": "string"}, "spec": {"type": "string"},
                "spec_version": {"type": "integer"}, "status": {"type": "string"},
                "states": {"type": "array", "items": {"type": "string"},
                           "description": "the innermost active states"},
                "revision": {"type": "integer"}, "steps": {"type": "integer"},
                "created_at": _TIME, "updated_at": _TIME, "last_transition_at": _TIME,
                "next_due": _TIME, "next_due_in": {"type": ["string", "null"],
                                                   "examples": ["in 1 h 5 min", "overdue"]}}},
            "Field": {"type": "object", "properties": {
                "name": {"type": "string"},
                "type": {"enum": ["string", "integer", "number", "boolean", "datetime",
                                  "enum", "json"]},
                "required": {"type": "boolean"},
                "enum": {"type": ["array", "null"], "items": {"type": "string"}}}},
            "Run": {"allOf": [_ref("RunSummary"), {"type": "object", "properties": {
                "configuration": {"type": "array", "items": {"type": "string"}},
                "ended": {"type": ["boolean", "null"]},
                "record": {"type": ["object", "null"],
                           "description": "the run's record without its history"},
                "timers": {"type": "array", "items": {"type": "object", "properties": {
                    "state": {"type": "string"}, "event": {"type": "string"},
                    "due": _TIME, "due_in": {"type": "string"},
                    "declined": {"type": "boolean"}}}},
                "work": {"type": "array", "description": "the run's work items, oldest "
                         "first, each with its attempts", "items": {
                             "type": "object", "properties": {
                                 "key": {"type": "string"}, "state": {"type": "string"},
                                 "handler": {"type": "string"},
                                 "status": {"enum": ["pending", "claimed", "ended"]},
                                 "attempts": {"type": "integer"},
                                 "failures": {"type": "integer"},
                                 "owner": {"type": ["string", "null"]},
                                 "lease_until": {"type": ["string", "null"]},
                                 "ended_by": {"type": ["string", "null"]},
                                 "last_error": {"type": ["string", "null"]},
                                 "history": {"type": "array", "items": {"type": "object"}}}}},
                "accepted_events": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "event": {"type": "string"},
                        "fields": {"type": "array", "items": _ref("Field")}}}}}}]},
            "Step": {"type": "object", "properties": {
                "index": {"type": "integer"}, "at": _TIME, "event": {"type": "string"},
                "source": {"type": "string"}, "target": {"type": "string"},
                "values": {"type": "object"},
                "by": {"type": ["string", "null"],
                       "description": "who sent the event (the step's reserved `@by`)"},
                "after": {"type": ["array", "null"], "items": {"type": "string"},
                          "description": "the innermost states active after the step"}}},
        },
    },
    "security": [{"basic": []}],
    "paths": {
        "/api/runs": {"get": {
            "summary": "A page of runs, with counts by status",
            "parameters": [
                {"name": name, "in": "query", "schema": schema, "description": text}
                for name, schema, text in (
                    ("spec", {"type": "string"}, "runs of this spec"),
                    ("status", {"type": "string"}, "runs reporting this status"),
                    ("state", {"type": "string"}, "runs in which this state is active"),
                    ("tag", {"type": "string"}, "runs in a state with this tag"),
                    ("due", {"enum": ["any", "overdue"]},
                     "runs with an armed timer (`any`), or one due now (`overdue`)"),
                    ("waiting", {"enum": ["1"]}, "runs waiting for an answer"),
                    ("order", {"enum": ["id", "due"]}, "by id (default) or due time"),
                    ("after", {"type": "string"}, "the `next` cursor of the page before"),
                    ("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "page size"))],
            "responses": {
                "200": _json_body({"type": "object", "properties": {
                    "runs": {"type": "array", "items": _ref("RunSummary")},
                    "counts": {"type": "object", "additionalProperties": {"type": "integer"},
                               "description": "runs matching the conditions but the status, "
                                              "by status, each counted up to 1,000"},
                    "counts_at_least": {"type": "array", "items": {"type": "string"},
                                        "description": "the statuses whose count reached "
                                                       "1,000: at least that many"},
                    "next": {"type": ["string", "null"]}, "now": _TIME}}, "the page"),
                "401": _PROBLEM, "422": _PROBLEM, **_STORE_FAILED}}},
        "/api/changes": {"get": {
            "summary": "The steps of a spec's runs as they commit (server-sent events)",
            "description": "A stream (`text/event-stream`) without end: one `step` event per "
                           "step, in commit order, its data the step as JSON (`position`, "
                           "`run_id`, `index`, `event`, `source`, `target`, `at`, `values`) "
                           "and its id the step's position; a reconnecting EventSource sends "
                           "the last id back (Last-Event-ID) and the stream goes on after it.",
            "parameters": [
                {"name": name, "in": where, "schema": {"type": "string"}, "description": text,
                 **({"required": True} if name == "spec" else {})}
                for name, where, text in (
                    ("spec", "query", "the spec whose runs' steps to stream"),
                    ("run_id", "query", "only this run's steps"),
                    ("after", "query", "a step's position: the steps after it (default: "
                                       "those committed from now on)"),
                    ("Last-Event-ID", "header", "as `after`; sent by a reconnecting "
                                                "EventSource"))],
            "responses": {
                "200": {"description": "the stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                "401": _PROBLEM, "422": _PROBLEM, **_STORE_FAILED}}},
        "/api/runs/{run_id}": {"get": {
            "summary": "A run: record, configuration, timers, the events it takes now",
            "parameters": [_RUN_ID],
            "responses": {"200": {**_json_body(_ref("Run"), "the run"), "headers": {
                "ETag": {"schema": {"type": "string"}, "description": "the revision"}}},
                "401": _PROBLEM, "404": _PROBLEM, **_STORE_FAILED}}},
        "/api/runs/{run_id}/history": {"get": {
            "summary": "A page of the run's history, newest first",
            "parameters": [_RUN_ID, {"name": "page", "in": "query",
                                     "schema": {"type": "integer", "minimum": 0}}],
            "responses": {"200": _json_body({"type": "object", "properties": {
                "steps": {"type": "array", "items": _ref("Step")},
                "page": {"type": "integer"}, "pages": {"type": "integer"},
                "total": {"type": "integer"}}}, "the steps"),
                "401": _PROBLEM, "404": _PROBLEM, "422": _PROBLEM, **_STORE_FAILED}}},
        "/api/runs/{run_id}/events/{event}": {"post": {
            "summary": "Answer: fire the event in your name (kept with the step as `@by`)",
            "parameters": [
                _RUN_ID, {"name": "event", "in": "path", "required": True,
                          "schema": {"type": "string"}},
                {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"},
                 "description": "the store's idempotency key: a repeat is applied once"},
                {"name": "If-Match", "in": "header", "schema": {"type": "string"},
                 "description": "the revision the answer was given for: 409 if the run "
                                "moved on"}],
            "requestBody": _json_body({"type": "object"}, "the event's values"),
            "responses": {
                "200": _json_body({"type": "object", "properties": {
                    "applied": {"type": "boolean"}, "revision": {"type": "integer"},
                    "status": {"type": "string"},
                    "states": {"type": "array", "items": {"type": "string"}}}},
                    "applied (or a repeat of an applied key: `applied` false)"),
                "401": _PROBLEM, "403": _PROBLEM, "404": _PROBLEM,
                "409": _PROBLEM, "415": _PROBLEM, "422": _PROBLEM, **_STORE_FAILED}}},
    },
}

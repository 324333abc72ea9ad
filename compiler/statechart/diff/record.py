"""Record fields from OLD to NEW: removed, renamed or dropped by a migration, added, and a
changed type, enum, `context` or `default`."""

from __future__ import annotations

from statechart.diff.base import DiffBase, names_text
from statechart.model import RecordField

# Type changes every stored value survives: an enum value is a string, an integer is a number.
_WIDENINGS = {("enum", "string"), ("integer", "number")}


class RecordDiff(DiffBase):
    def compare_record(self) -> None:
        for f in self.old.record:
            if f.name not in self.fmap and f.name in self.dropped:
                self.add("field-removed", f"record field `{f.name}` dropped by a migration",
                         f.span, migrated=True)
                continue
            if f.name not in self.fmap:
                self.add("field-removed", f"record field `{f.name}` was removed", f.span,
                         runs=True, help="stored records hold values for it; add a migration "
                                         "or keep the field")
                continue
            n = self.new.record_field(self.fmap[f.name])
            assert n is not None
            if n.name != f.name:
                self.add("field-renamed", f"record field `{f.name}` renamed to `{n.name}` by "
                         "a migration", n.span, migrated=True)
            self.compare_field(f, n)
        for n in self.new.record:
            if n.name not in self.fmap.values():
                # A new field with a default: the replay expects old records to hold it.
                stored = n.default is not None and not n.context
                self.add("field-added", f"new record field `{n.name}`"
                         + (", filled with its default by a migration"
                            if stored and n.name in self.fills else ""), n.span,
                         runs=stored and n.name not in self.fills,
                         migrated=stored and n.name in self.fills,
                         help=f"stored records lack it, and a run starts with its default: "
                              f"add `fill: [{n.name}]` to the migration" if stored else "")

    def compare_field(self, o: RecordField, n: RecordField) -> None:
        self.compare_context(o, n)
        if o.type == n.type == "enum":
            lost = [v for v in o.enum if v not in n.enum]
            gained = [v for v in n.enum if v not in o.enum]
            if lost:
                self.add("enum-narrowed", f"`{n.name}` no longer allows {names_text(lost)}", n.span,
                         runs=True, callers=True,
                         help="stored records may hold them; callers may still send them")
            if gained:
                self.add("enum-widened", f"`{n.name}` now also allows {names_text(gained)}", n.span,
                         help="readers that match every value must handle the new ones")
        elif o.type != n.type:
            safe = (o.type, n.type) in _WIDENINGS
            self.add("field-type-changed", f"`{n.name}` is now {n.type} (was {o.type})", n.span,
                     runs=not safe, callers=not safe,
                     help="" if safe else "stored values of the old type no longer validate")

    def compare_context(self, o: RecordField, n: RecordField) -> None:
        """A field's `context` and `default`: only the history's fields are replayed, so a
        change breaks stored runs only where the check compares values with the history."""
        if n.context and not o.context:
            self.add("context-added", f"`{n.name}` is now run context", n.span)
        elif o.context and not n.context:
            self.add("context-removed", f"`{n.name}` is no longer run context", n.span,
                     runs=True, callers=True,
                     help="stored values the application set disagree with the history; "
                          "`update` and the constructor no longer take it")
        if o.default != n.default or type(o.default) is not type(n.default):
            filled = o.default is None and n.name in self.fills
            self.add("default-changed", f"`{n.name}` now defaults to {_value(n.default)} "
                     f"(was {_value(o.default)})" + (", filled by a migration" if filled
                                                      else ""),
                     n.default_span or n.span, runs=not n.context and not filled,
                     migrated=filled and not n.context,
                     help="" if n.context else "stored runs whose history never set it hold "
                          "the old default, and the check expects the new one")


def _value(value: object) -> str:
    return "nothing" if value is None else f"`{value}`"



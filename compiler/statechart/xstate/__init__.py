"""XState v5 machine configs in and out (`statechart render --format xstate`, `statechart
import machine.json`): `export` writes a checked spec as the JSON config `createMachine`
takes; `importer` reads one back as spec YAML. docs/scxml.md, "XState", has the table."""

# Our keys XState has no place for ride in `meta` under this key (XState keeps `meta` as it is
# and Stately's editor shows it).
META = "statechart-compiler"

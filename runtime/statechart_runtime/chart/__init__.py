"""The chart layer: what a spec means, with no run, store or library in it.

- `chart`: the chart semantics (`Chart`: states, transitions, selection, entry and exit order);
- `events`: the event vocabulary (internal event names, descriptors);
- `timers`: timer tables and the `after:` clock;
- `spec`: the spec tables a generated module hands the runtime (`SpecTables`);
- `kernel`: the step (an event's macrostep to rest);
- `values`: field values, times and their JSON codecs (what the chart's guards, timers and
  spec tables read; the run layer stores them).
"""

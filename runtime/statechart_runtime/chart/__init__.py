"""The chart layer: what a spec means, with no run, store or library in it.

- `chart`: the chart semantics (`Chart`: states, transitions, selection, entry and exit order);
- `events`: the event vocabulary (internal event names, descriptors);
- `timers`: timer tables and the `after:` clock;
- `spec`: the spec tables a generated module hands the runtime (`SpecTables`);
- `kernel`: the step (select, step, commit; the order of a macrostep's microsteps, which
  `statechart_runtime.run.driver` runs to rest);
- `step_kinds`: how a step took its transition, and its codec (record JSON, store column);
- `values`: field values, times and their JSON codecs (what the chart's guards, timers and
  spec tables read; the run layer stores them).
"""

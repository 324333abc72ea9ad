// Runs the conformance specs' machines through XState and prints what happened, for
// make_traces.py (which writes the golden traces). Input on stdin, a JSON list of
//   {name, machine, guards: {name: bool}, actions: [name], sequences: [[event]], internal: bool}
// Output on stdout, a JSON list of
//   {name, initial: STEP, sequences: [[STEP]]}, STEP = [accepted 0|1, [state id], [action], done 0|1]
// where the states are every active state (ancestors included) in document order, the actions
// are the entry/exit actions run, in order, and a sequence stops at the step that ends the run.
// With `internal`, a STEP has a fifth field: the internal events (`done.state.ID`, and
// `always` for each eventless transition) the macrostep took after the event's own
// microstep, in order (a raised event no transition
// took is not listed). The state ids are those of the spec: history states are never active.
// With `timers`, a sequence's actions are events (strings) or clock advances in ms (numbers):
// the actor runs on a LogicalClock (below), an advance is `clock.increment(ms)` (a STEP with
// accepted 1), and the fifth field also lists the delayed events taken (`after.MS.ID`).
//
// LogicalClock: XState's own SimulatedClock sets `now` to the end of an advance and then
// fires the due timeouts, so a timer armed while another fires counts its delay from the
// end of the advance. Our runs use logical time (a durable run's timer steps happen at their
// due times, whatever time a worker gets to them): `increment(ms)` takes the earliest pending
// timeout due at or before the target, sets `now` to its due time, runs it (a timeout it
// schedules counts from that `now`, and fires in the same advance if due by the target),
// and repeats until none is due; then `now` is the target. Which of two timeouts due at the
// same instant goes first is SimulatedClock's choice (its sort, its comparator); the
// generator avoids ties and the clock refuses one.
import { readFileSync } from 'node:fs';
import { and, createActor, createMachine, stateIn } from 'xstate';

// Must match make_traces.py: the action of the targetless `onDone` of top-level parallel states,
// and the action of a spec's targetless transitions (XState's `can()` refuses a transition with
// neither a target nor an action). Neither is in the action log.
const DONE_MARKER = '__top_parallel_done__';
const TARGETLESS_MARKER = '__targetless__';
const isMarker = (action) => (action?.type ?? action) === DONE_MARKER;

// The clock interface XState uses is `setTimeout(fn, ms)` and `clearTimeout(id)` (its
// scheduler calls nothing else); `now`, `timeouts` and `increment` are SimulatedClock's.
class LogicalClock {
  constructor(name) {
    this.name = name;
    this.timeouts = new Map(); // id -> {start, timeout, fn}, in scheduling order
    this._now = 0;
    this._id = 0;
  }

  now() {
    return this._now;
  }

  setTimeout(fn, timeout) {
    const id = this._id++;
    this.timeouts.set(id, { start: this._now, timeout, fn });
    return id;
  }

  clearTimeout(id) {
    this.timeouts.delete(id);
  }

  // The pending timeouts, earliest first, as SimulatedClock.flushTimeouts sorts them.
  sorted() {
    return [...this.timeouts].sort(([_idA, a], [_idB, b]) => {
      const endA = a.start + a.timeout;
      const endB = b.start + b.timeout;
      return endB > endA ? -1 : 1;
    });
  }

  increment(ms) {
    const target = this._now + ms;
    for (;;) {
      const [first, second] = this.sorted();
      if (first === undefined) break;
      const [id, timeout] = first;
      const end = timeout.start + timeout.timeout;
      if (end > target) break;
      // Ties would be ordered by SimulatedClock's sort here and by document order in our
      // runs: the generator makes none (see TimerBuilder). Check it holds.
      if (second !== undefined && second[1].start + second[1].timeout === end) {
        throw new Error(`${this.name}: two timers due at the same instant (${end} ms)`);
      }
      this._now = end;
      this.timeouts.delete(id);
      timeout.fn.call(null);
    }
    this._now = target;
  }
}

function exitsOf(config) {
  const exits = new Map();
  const walk = (states) => {
    for (const [key, node] of Object.entries(states ?? {})) {
      exits.set(node.id ?? key, node.exit ?? []);
      walk(node.states);
    }
  };
  walk(config.states);
  return exits;
}

function run(spec) {
  let log = [];
  // The internal events taken by microsteps of the current macrostep (XState's inspection
  // API reports every microstep with the event and the transitions it took).
  let internal = [];
  const inspect = (ev) => {
    if (ev.type !== '@xstate.microstep') return;
    // An eventless microstep (`always`: XState's transitions with the empty event type)
    // reports the event before it: one `always` per transition it took, as our history.
    const eventless = ev._transitions.filter((t) => t.eventType === '').length;
    if (eventless > 0) {
      for (let i = 0; i < eventless; i++) internal.push('always');
      return;
    }
    if (!ev.event.type.startsWith('xstate.done.state.')
        && !ev.event.type.startsWith('xstate.after.')) return;
    // The targetless transition marked DONE_MARKER is the runner's own, not a spec's `done:`.
    if (ev._transitions.some((t) => (t.target && t.target.length > 0)
                             || !(t.actions ?? []).some(isMarker))) {
      internal.push(ev.event.type.slice('xstate.'.length));
    }
  };
  const actions = {};
  for (const name of [...spec.actions, DONE_MARKER, TARGETLESS_MARKER]) {
    actions[name] = () => { log.push(name); };
  }
  const guards = {};
  for (const [name, value] of Object.entries(spec.guards)) {
    guards[name] = () => value;
  }
  const machine = createMachine(prepare(spec.machine)).provide({ actions, guards });
  const exits = exitsOf(spec.machine);

  // `_nodes` is XState's own list of active state nodes (the pinned version's snapshot field);
  // `order` is its document order. The root node is not a state of the spec.
  const active = (snapshot) => snapshot._nodes
    .filter((node) => node !== machine.root)
    .sort((a, b) => a.order - b.order);
  const observe = (snapshot, accepted) => {
    let done = snapshot.status === 'done';
    const ran = log.filter((name) => name !== DONE_MARKER && name !== TARGETLESS_MARKER);
    if (log.includes(DONE_MARKER)) {
      // A top-level parallel state completed: our runs end there, and ending a run does
      // what XState does when a machine reaches a top-level final state (and SCXML's
      // exitInterpreter): run the exit actions of every active state, in reverse document
      // order.
      done = true;
      for (const node of [...active(snapshot)].reverse()) ran.push(...exits.get(node.id));
    }
    const step = [accepted ? 1 : 0, active(snapshot).map((node) => node.id), ran, done ? 1 : 0];
    if (spec.internal) step.push(internal);
    return step;
  };

  let initial = null;
  const sequences = [];
  for (const events of spec.sequences) {
    log = [];
    internal = [];
    const clock = spec.timers ? new LogicalClock(spec.name) : undefined;
    const actor = createActor(machine, spec.internal ? { inspect, clock } : {});
    actor.start();
    const first = observe(actor.getSnapshot(), true);
    initial ??= first;
    if (JSON.stringify(first) !== JSON.stringify(initial)) {
      throw new Error(`${spec.name}: the initial step differs between sequences`);
    }
    const steps = [];
    for (const type of events) {
      if (typeof type === 'number') {
        log = [];
        internal = [];
        clock.increment(type);
        const step = observe(actor.getSnapshot(), true);
        steps.push(step);
        if (step[3]) break;
        continue;
      }
      const before = actor.getSnapshot();
      const accepted = before.can({ type });
      log = [];
      internal = [];
      actor.send({ type });
      const step = observe(actor.getSnapshot(), accepted);
      if (!accepted && (log.length > 0 || actor.getSnapshot() !== before)) {
        // `can` said no, yet something ran: the trace would call a real move a refusal.
        throw new Error(`${spec.name}: \`${type}\` was refused by can() but changed the machine`);
      }
      steps.push(step);
      if (step[3]) break;
    }
    actor.stop();
    sequences.push(steps);
  }
  return { name: spec.name, initial, sequences };
}

const specs = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(specs.map(run)));

// The config as `statechart render --format xstate` writes it (make_traces.py), made ready to
// run and trace:
// - a guard `{type: 'statechart:in', params: {guard?, in: ['#id', ...]}}` (a transition with
//   `in:` states) becomes `and([guard, stateIn('#id'), ...])`, XState's In(): the config is
//   JSON, so the runner makes the guard objects;
// - a targetless transition gets TARGETLESS_MARKER (XState's `can()` refuses a transition with
//   neither a target nor an action);
// - a top-level parallel state without `onDone` gets a targetless `onDone` marked DONE_MARKER:
//   XState ends a machine only in a top-level final state, our runs also when a top-level
//   parallel state completes.
function prepare(node, depth = 0) {
  const fix = (transitions) => {
    if (transitions === undefined || typeof transitions === 'string') return transitions;
    const list = Array.isArray(transitions) ? transitions : [transitions];
    return list.map((t) => {
      if (typeof t !== 'object') return t;
      let out = t;
      if (out.target === undefined) {
        out = { ...out, actions: [...(out.actions ?? []), TARGETLESS_MARKER] };
      }
      if (out.guard?.type === 'statechart:in') {
        const { guard: given, in: states } = out.guard.params;
        out = { ...out, guard: and([...(given ? [given] : []), ...states.map((id) => stateIn(id))]) };
      }
      return out;
    });
  };
  const out = { ...node };
  if (node.on) out.on = Object.fromEntries(Object.entries(node.on).map(([e, t]) => [e, fix(t)]));
  if (node.onDone) out.onDone = fix(node.onDone);
  else if (depth === 1 && node.type === 'parallel') out.onDone = { actions: [DONE_MARKER] };
  if (node.always) out.always = fix(node.always);
  if (node.after) out.after = Object.fromEntries(Object.entries(node.after).map(([k, t]) => [k, fix(t)]));
  if (node.states) {
    out.states = Object.fromEntries(Object.entries(node.states).map(
      ([k, s]) => [k, prepare(s, depth + 1)]));
  }
  return out;
}

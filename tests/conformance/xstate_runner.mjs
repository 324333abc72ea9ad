// Runs the conformance specs' machines through XState and prints what happened, for
// make_traces.py (which writes the golden traces). Input on stdin, a JSON list of
//   {name, machine, guards: {name: bool}, actions: [name], sequences: [[event]], internal: bool}
// Output on stdout, a JSON list of
//   {name, initial: STEP, sequences: [[STEP]]}, STEP = [accepted 0|1, [state id], [action], done 0|1]
// where the states are every active state (ancestors included) in document order, the actions
// are the entry/exit actions run, in order, and a sequence stops at the step that ends the run.
// With `internal`, a STEP has a fifth field: the internal events (`done.state.ID`) the
// macrostep took after the event's own microstep, in order (a raised event no transition
// took is not listed). The state ids are those of the spec: history states are never active.
// With `timers`, a sequence's actions are events (strings) or clock advances in ms (numbers):
// the actor runs on a SimulatedClock, an advance is `clock.increment(ms)` (a STEP with
// accepted 1), and the fifth field also lists the delayed events taken (`after.MS.ID`).
import { readFileSync } from 'node:fs';
import { createActor, createMachine, SimulatedClock } from 'xstate';

// Must match make_traces.py: the action of the targetless `onDone` of top-level parallel states.
const DONE_MARKER = '__top_parallel_done__';

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
    if (!ev.event.type.startsWith('xstate.done.state.')
        && !ev.event.type.startsWith('xstate.after.')) return;
    // A targetless transition is the runner's own marker (DONE_MARKER), not a spec's `done:`.
    if (ev._transitions.some((t) => t.target && t.target.length > 0)) {
      internal.push(ev.event.type.slice('xstate.'.length));
    }
  };
  const actions = {};
  for (const name of [...spec.actions, DONE_MARKER]) {
    actions[name] = () => { log.push(name); };
  }
  const guards = {};
  for (const [name, value] of Object.entries(spec.guards)) {
    guards[name] = () => value;
  }
  const machine = createMachine(spec.machine).provide({ actions, guards });
  const exits = exitsOf(spec.machine);

  // `_nodes` is XState's own list of active state nodes (the pinned version's snapshot field);
  // `order` is its document order. The root node is not a state of the spec.
  const active = (snapshot) => snapshot._nodes
    .filter((node) => node !== machine.root)
    .sort((a, b) => a.order - b.order);
  const observe = (snapshot, accepted) => {
    let done = snapshot.status === 'done';
    const ran = log.filter((name) => name !== DONE_MARKER);
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
    const clock = spec.timers ? new SimulatedClock() : undefined;
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
        // The generator makes ties impossible (distinct delays modulo 100 ms, advances in
        // whole 100 ms); XState would order them otherwise than our runs. Check it holds.
        const ends = [...clock.timeouts.values()].map((t) => t.start + t.timeout)
          .filter((end) => end <= clock.now() + type);
        if (new Set(ends).size !== ends.length) {
          throw new Error(`${spec.name}: two timers due at the same instant`);
        }
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

// XState 5 stepping one machine along one path, for bench/bench_xstate_events.py. The
// first line on stdin is {machine: CONFIG, guards: [NAME], path: [TYPE], steady: [TYPE],
// toSteady: [TYPE], runsPerRound: N}; every guard answers true (the Python side takes the
// same branch). Then one command a line, one JSON answer a line on stdout:
//   "trace"   -> [[STATE ...] ...]: the active leaf and compound states after each event
//                of `path`, on a new actor (the bench checks them against the generated
//                class before timing anything);
//   "created" -> seconds per event: `runsPerRound` new actors, each driven along `path`;
//   "steady"  -> seconds per event: one actor taken along `toSteady`, then `steady` timed.
// A persistent process, so that the Python side interleaves XState's rounds with its own.
import { createInterface } from 'node:readline';
import { createActor, createMachine } from 'xstate';

const lines = createInterface({ input: process.stdin });
let machine;
let input;

function activeStates(snapshot) {
  const out = [];
  const walk = (value) => {
    if (typeof value === 'string') { out.push(value); return; }
    for (const [key, child] of Object.entries(value)) { out.push(key); walk(child); }
  };
  walk(snapshot.value);
  return out.sort();
}

function created() {
  const { path, runsPerRound } = input;
  const start = process.hrtime.bigint();
  for (let i = 0; i < runsPerRound; i++) {
    const actor = createActor(machine).start();
    for (const event of path) actor.send(event);
  }
  return Number(process.hrtime.bigint() - start) / 1e9 / (runsPerRound * path.length);
}

function steady() {
  const actor = createActor(machine).start();
  for (const event of input.toSteady) actor.send(event);
  const { steady: events } = input;
  const start = process.hrtime.bigint();
  for (const event of events) actor.send(event);
  return Number(process.hrtime.bigint() - start) / 1e9 / events.length;
}

function trace() {
  const actor = createActor(machine).start();
  return input.path.map((event) => { actor.send(event); return activeStates(actor.getSnapshot()); });
}

lines.on('line', (line) => {
  if (input === undefined) {
    input = JSON.parse(line);
    // each event an object made once, as XState's `send` takes it
    for (const key of ['path', 'toSteady', 'steady']) {
      input[key] = input[key].map((type) => ({ type }));
    }
    const guards = Object.fromEntries(input.guards.map((name) => [name, () => true]));
    machine = createMachine(input.machine, { guards });
    process.stdout.write('"ready"\n');
    return;
  }
  const command = { created, steady, trace }[line.trim()];
  if (command === undefined) throw new Error(`unknown command ${line}`);
  process.stdout.write(JSON.stringify(command()) + '\n');
});

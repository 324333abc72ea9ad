// XState's path generators on one machine, for bench/bench_paths.py. Input on stdin:
//   {algorithm: "shortest" | "simple", machine: CONFIG, events: [EVENT], guards: [NAME]}
// where each EVENT is {type, answers: {guard: bool}} (a guard's answer travels with the
// event, so that the traversal tries both), and the machine config uses `guard: NAME`.
// Output on stdout: {seconds, cpuSeconds, paths: [[EVENT]]}: each path's events from the
// initial state (xstate.init left out), and the seconds (wall, CPU) the generator took
// (machine creation excluded).
import { readFileSync } from 'node:fs';
import { createMachine } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';

const input = JSON.parse(readFileSync(0, 'utf8'));
const guards = Object.fromEntries(input.guards.map(
  (name) => [name, ({ event }) => !(event.answers && event.answers[name] === false)]));
const machine = createMachine(input.machine, { guards });
const generate = input.algorithm === 'simple' ? getSimplePaths : getShortestPaths;
const start = process.hrtime.bigint();
const cpu = process.cpuUsage();
const paths = generate(machine, { events: input.events });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
const out = paths.map((path) => path.steps
  .map((step) => step.event)
  .filter((event) => !event.type.startsWith('xstate.'))
  .map((event) => ({ type: event.type, answers: event.answers ?? {} })));
process.stdout.write(JSON.stringify({ seconds, cpuSeconds, paths: out }));

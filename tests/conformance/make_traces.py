"""Make the conformance suite's golden traces: random specs run by XState 5.

Run by hand (not by pytest), from the repository root, after `npm ci` in this folder:

    .venv/bin/python tests/conformance/make_traces.py

It builds seeded random specs in our YAML format (plus the fixed repro specs below), keeps only
those `statechart check` accepts, converts each to an XState machine config, draws event
sequences, runs them all through `xstate_runner.mjs` in one node process, and writes
`traces/part-NN.json.gz`. The same seed gives the same files byte for byte.
`tests/test_conformance.py` replays the traces against the generated Python modules.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # codegen_support: the same `check` the tests trust

from codegen_support import checked_text  # noqa: E402

from statechart.linter import check_source  # noqa: E402

FORMAT = 1
SEQUENCES = 20
EVENTS = 30
SPECS_PER_FILE = 25
# The runner reports this action when a top-level parallel state's regions have all reached
# final states (see xstate_runner.mjs). It can never be a spec name: names start with a letter.
DONE_MARKER = "__top_parallel_done__"


@dataclass
class State:
    name: str
    kind: str  # atomic, compound, parallel, final
    parent: State | None = None
    children: list[State] = field(default_factory=list)
    initial: str | None = None
    entry: list[str] = field(default_factory=list)
    exit: list[str] = field(default_factory=list)
    # event -> alternatives (target, guard or None), tried in order
    on: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    closed: bool = False  # neither it nor an ancestor has transitions: may hold a final child

    def walk(self) -> Iterator[State]:
        yield self
        for c in self.children:
            yield from c.walk()

    def ancestors(self) -> list[State]:
        out, s = [], self.parent
        while s is not None:
            out.append(s)
            s = s.parent
        return out


@dataclass
class Spec:
    name: str
    initial: str
    top: list[State]
    guards: dict[str, bool] = field(default_factory=dict)

    def states(self) -> list[State]:
        """Every state, in document order."""
        return [s for t in self.top for s in t.walk()]

    def by_name(self) -> dict[str, State]:
        return {s.name: s for s in self.states()}

    def events(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.states():
            for e in s.on:
                seen.setdefault(e, None)
        return list(seen)

    def actions(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.states():
            for a in (*s.entry, *s.exit):
                seen.setdefault(a, None)
        return list(seen)


# ---- YAML ---------------------------------------------------------------------------------

def to_yaml(spec: Spec) -> str:
    """Block YAML in the spec format; every name is an identifier, so nothing needs quoting."""
    lines = [f"statechart: {spec.name}", "version: 1", f"initial: {spec.initial}", "states:"]

    def state(s: State, indent: int) -> None:
        pad = " " * indent
        lines.append(f"{pad}{s.name}:")
        body = " " * (indent + 2)
        if s.kind == "final":
            lines.append(f"{body}final: true")
        if s.kind == "parallel":
            lines.append(f"{body}parallel: true")
        if s.kind == "compound":
            lines.append(f"{body}initial: {s.initial}")
        if s.entry:
            lines.append(f"{body}entry: [{', '.join(s.entry)}]")
        if s.exit:
            lines.append(f"{body}exit: [{', '.join(s.exit)}]")
        if s.on:
            lines.append(f"{body}on:")
            for event, alts in s.on.items():
                if len(alts) == 1 and alts[0][1] is None:
                    lines.append(f"{body}  {event}: {alts[0][0]}")
                    continue
                lines.append(f"{body}  {event}:")
                for target, guard in alts:
                    g = f", guard: {guard}" if guard else ""
                    lines.append(f"{body}    - {{target: {target}{g}}}")
        if s.children:
            lines.append(f"{body}states:")
            for c in s.children:
                state(c, indent + 4)
        if len(lines[-1]) == len(pad) + len(s.name) + 1:  # nothing under it
            lines[-1] += " {}"

    for s in spec.top:
        state(s, 2)
    return "\n".join(lines) + "\n"


# ---- XState -------------------------------------------------------------------------------

def xstate_config(spec: Spec) -> dict[str, object]:
    """The machine config: every state's id is its (globally unique) name and every target is
    written `#id`, so targets resolve the same wherever the source is. Every transition has
    `reenter: true`: our transitions are SCXML external transitions."""

    def node(s: State, top_level: bool) -> dict[str, object]:
        out: dict[str, object] = {"id": s.name}
        if s.kind == "parallel":
            out["type"] = "parallel"
        elif s.kind == "final":
            out["type"] = "final"
        elif s.kind == "compound":
            out["initial"] = s.initial
        if s.entry:
            out["entry"] = list(s.entry)
        if s.exit:
            out["exit"] = list(s.exit)
        if s.on:
            out["on"] = {event: [{"target": f"#{t}", "reenter": True,
                                  **({"guard": g} if g else {})} for t, g in alts]
                         for event, alts in s.on.items()}
        if s.kind == "parallel" and top_level:
            # XState ends a machine only in a top-level final state; our runs also end when a
            # top-level parallel state completes (see xstate_runner.mjs). A targetless
            # transition changes nothing; its action tells the runner it happened.
            out["onDone"] = {"actions": [DONE_MARKER]}
        if s.children:
            out["states"] = {c.name: node(c, False) for c in s.children}
        return out

    return {"initial": spec.initial,
            "states": {s.name: node(s, True) for s in spec.top}}


# ---- Fixed repro specs --------------------------------------------------------------------

def _leaf(name: str, on: dict[str, str] | None = None, kind: str = "atomic",
          actions: bool = True) -> State:
    s = State(name, kind, on={e: [(t, None)] for e, t in (on or {}).items()})
    if actions:
        s.entry, s.exit = [f"en_{name}"], [f"ex_{name}"]
    return s


def _group(name: str, kind: str, children: list[State], initial: str | None = None,
           actions: bool = True) -> State:
    s = State(name, kind, children=children, initial=initial)
    for c in children:
        c.parent = s
    if actions:
        s.entry, s.exit = [f"en_{name}"], [f"ex_{name}"]
    return s


def fixed_specs() -> list[Spec]:
    # A1: `step` then `go`: both regions take `go`; the two transitions conflict (each exits
    # `par`), and SCXML keeps the one of the region first in document order: r1 -> `left`.
    a1 = Spec("fixed_par_conflict", "par", [
        _group("par", "parallel", [
            _group("r1", "compound", [_leaf("a1", {"step": "a2"}), _leaf("a2", {"go": "left"})],
                   "a1"),
            _group("r2", "compound", [_leaf("b1", {"go": "right"})], "b1")]),
        _leaf("left", kind="final"), _leaf("right", kind="final")])
    # A2: r1 lists a1, a2 before its initial a3. Entry order is document order of the states
    # entered (par, r1, a3, r2, b1), and `go` still resolves in r1's favour: `left`.
    a2 = Spec("fixed_par_doc_order", "par", [
        _group("par", "parallel", [
            _group("r1", "compound", [_leaf("a1", {"go": "left", "step": "a2"}),
                                      _leaf("a2", {"go": "left"}),
                                      _leaf("a3", {"go": "left", "step": "a1"})], "a3"),
            _group("r2", "compound", [_leaf("b1", {"go": "right"})], "b1")]),
        _leaf("left", kind="final"), _leaf("right", kind="final")])
    # A5: a top-level parallel state whose regions each reach a final child on one event:
    # after `fin1` and `fin2` the run has ended. `quit` makes the top-level final reachable.
    a5 = Spec("fixed_top_parallel_done", "both", [
        _group("both", "parallel", [
            _group("r1", "compound", [_leaf("a1", {"fin1": "a_done", "quit": "end"}),
                                      _leaf("a_done", kind="final", actions=False)], "a1",
                   actions=False),
            _group("r2", "compound", [_leaf("b1", {"fin2": "b_done"}),
                                      _leaf("b_done", kind="final", actions=False)], "b1",
                   actions=False)], actions=False),
        _leaf("end", kind="final", actions=False)])
    return [a1, a2, a5]


# ---- Random specs -------------------------------------------------------------------------

def common_ancestor(a: State, b: State) -> State | None:
    """The nearest state that is a proper ancestor of both (None: the root)."""
    line = {id(x) for x in b.ancestors()}
    for x in a.ancestors():
        if id(x) in line:
            return x
    return None


def target_allowed(source: State, target: State) -> bool:
    """False when XState and SCXML disagree on the transition's domain. SCXML's domain is the
    nearest common *compound* proper ancestor of source and target; XState 5's is the nearest
    common proper ancestor, which may be a parallel state (statelyai/xstate#4360: from one
    region to another, or from a region to its own descendant, SCXML also exits and re-enters
    the parallel state, XState does not; checked with 5.33.3). Such transitions are not
    generated."""
    anc = common_ancestor(source, target)
    return anc is None or anc.kind != "parallel"


class Builder:
    def __init__(self, rng: random.Random, name: str) -> None:
        self.rng = rng
        self.name = name
        self.count = 0
        self.guard_count = 0
        self.guards: dict[str, bool] = {}
        self.events: list[str] = []

    def new(self, kind: str) -> State:
        self.count += 1
        return State(f"_{self.count}", kind)  # renamed at the end, see `rename`

    def group(self, depth: int, closed: bool, region: bool = False) -> State:
        """A state at `depth` (0: top level). Leaves are at most three levels below the top.
        A region is always compound."""
        rng = self.rng
        kinds = ["atomic"] * 4
        if depth <= 2:
            kinds += ["compound"] * 3
        if depth <= 1:  # a parallel state's regions hold leaves: two levels below it
            kinds += ["parallel"] * 2
        kind = "compound" if region else rng.choice(kinds)
        s = self.new(kind)
        if kind == "atomic":
            return s
        # A closed group keeps its subtree free of transitions above a final child.
        s.closed = closed or (depth == 0 and rng.random() < 0.12)
        if kind == "parallel":
            s.children = [self.group(depth + 1, s.closed and rng.random() < 0.8, region=True)
                          for _ in range(rng.randint(2, 3))]
        else:
            n = rng.randint(1, 3) if region else rng.randint(2, 3)
            s.children = [self.group(depth + 1, s.closed and rng.random() < 0.6)
                          for _ in range(n)]
            if s.closed and rng.random() < 0.8:
                s.children.insert(rng.randrange(len(s.children) + 1), self.new("final"))
            s.initial = rng.choice([c for c in s.children if c.kind != "final"]).name
        for c in s.children:
            c.parent = s
        return s

    def top_parallel(self) -> State:
        """A top-level parallel state whose regions each hold a final child."""
        s = self.new("parallel")
        s.closed = True
        for _ in range(self.rng.randint(2, 3)):
            region = self.group(1, True, region=True)
            if not any(c.kind == "final" for c in region.children):
                final = self.new("final")
                final.parent = region
                region.children.insert(self.rng.randrange(len(region.children) + 1), final)
            region.parent = s
            s.children.append(region)
        return s

    def guard(self) -> str:
        name = f"g{self.guard_count}"
        self.guard_count += 1
        self.guards[name] = self.rng.random() < 0.5
        return name

    def targets(self, source: State, states: list[State]) -> list[tuple[State, float]]:
        # Top-level finals weigh less, so that most sequences run a while before they end.
        return [(t, 0.04 if t.kind == "final" and t.parent is None else 1.0)
                for t in states if target_allowed(source, t)]

    def pick_target(self, source: State, states: list[State]) -> State:
        options = self.targets(source, states)
        return self.rng.choices([t for t, _ in options], [w for _, w in options])[0]

    def add_event(self, source: State, events: list[str], target: State) -> None:
        free = [e for e in events if e not in source.on]
        if not free:
            events.append(f"e{len(events)}")
            free = [events[-1]]
        source.on[self.rng.choice(free)] = [(target.name, None)]

    def build(self) -> Spec:
        rng = self.rng
        top: list[State] = []
        if rng.random() < 0.25:
            top.append(self.top_parallel())
        for _ in range(rng.randint(1 if top else 2, 3)):
            top.append(self.group(0, False))
        finals = [self.new("final") for _ in range(rng.randint(1, 2))]
        rng.shuffle(top)
        initial = rng.choice(top)
        top += finals
        rng.shuffle(top)
        spec = Spec(self.name, initial.name, top, self.guards)
        states = spec.states()
        events = [f"e{i}" for i in range(rng.randint(3, 6))]
        for s in states:
            if s.kind == "final" or s.closed:
                continue
            chance = {"atomic": 0.9, "compound": 0.45, "parallel": 0.4}[s.kind]
            if rng.random() >= chance:
                continue
            count = rng.randint(1, 3 if s.kind == "atomic" else 2)
            for event in rng.sample(events, min(count, len(events))):
                n = 1 if rng.random() < 0.65 else rng.randint(2, 3)
                alts = []
                for i in range(n):
                    last = i == n - 1
                    guarded = not last or rng.random() < (0.4 if n > 1 else 0.15)
                    alts.append((self.pick_target(s, states).name,
                                 self.guard() if guarded else None))
                s.on[event] = alts
        self.events = events
        return spec


def rename(spec: Spec, rng: random.Random) -> None:
    """State names `s<N>` with N shuffled, so that neither name order nor number order is
    document order (a bug that sorts by name must not pass by luck)."""
    states = spec.states()
    numbers = list(range(1, len(states) + 1))
    rng.shuffle(numbers)
    mapping = {s.name: f"s{n}" for s, n in zip(states, numbers, strict=True)}
    for s in states:
        s.name = mapping[s.name]
        s.initial = mapping[s.initial] if s.initial else None
        s.on = {e: [(mapping[t], g) for t, g in alts] for e, alts in s.on.items()}
    spec.initial = mapping[spec.initial]


def add_actions(spec: Spec, rng: random.Random) -> None:
    """Entry and exit actions named after their state, so the log shows the order of entries
    and exits; sometimes two, to check they run in the order written."""
    for s in spec.states():
        p = 0.4 if s.kind == "final" else 0.35
        if rng.random() < p:
            s.entry = ["en_" + s.name] + (["en2_" + s.name] if rng.random() < 0.15 else [])
        if rng.random() < p:
            s.exit = ["ex_" + s.name] + (["ex2_" + s.name] if rng.random() < 0.15 else [])


def _named(message: str) -> str:
    return message.split("`")[1]


def repair(spec: Spec, builder: Builder, rounds: int = 30) -> bool:
    """Add transitions until `check` accepts the spec, using its own diagnostics: a way into
    each unreachable state, a way to a top-level final from each state that cannot finish.
    False when other errors remain (the spec is then discarded)."""
    rng = builder.rng
    for _ in range(rounds):
        result = check_source("spec.yaml", to_yaml(spec).encode())
        errors = list(result.errors)
        if not errors:
            return True
        states = spec.by_name()
        unreachable = {_named(d.message) for d in errors if d.rule == "unreachable-state"}
        finals = [s for s in spec.top if s.kind == "final"]
        # One way out per round: it often lets many states finish at once, and every
        # transition to a final ends sequences early.
        stuck = [d for d in errors if d.rule in ("no-path-to-final", "trap-state")]
        if stuck:
            errors = [d for d in errors if d not in stuck] + [rng.choice(stuck)]
        for d in errors:
            name = _named(d.message)
            if d.rule == "unreachable-state":
                target = states[name]
                sources = [s for s in states.values()
                           if s.kind != "final" and not s.closed and s.name not in unreachable
                           and not any(a.name in unreachable for a in s.ancestors())
                           and target_allowed(s, target)]
                if not sources:
                    return False
                builder.add_event(rng.choice(sources), builder.events, target)
            elif d.rule in ("no-path-to-final", "trap-state"):
                # Mostly a way to a state that can finish, rather than straight to a final:
                # transitions to finals end sequences early.
                flagged = unreachable | {_named(x.message) for x in stuck}
                source = states[name]
                finishing = [s for s in states.values() if s.kind == "atomic"
                             and s.name not in flagged and target_allowed(source, s)]
                pool = finishing if finishing and rng.random() < 0.7 else finals
                builder.add_event(source, builder.events, rng.choice(pool))
            else:
                return False
    return checked_text(to_yaml(spec)) is not None


def check_tree(spec: Spec) -> None:
    """The generator's own invariants: parent links match the tree (the domain check relies
    on them) and no transition has a parallel state as its domain in XState's sense."""
    for s in spec.top:
        assert s.parent is None, s.name
    states = spec.states()
    for s in states:
        for c in s.children:
            assert c.parent is s, (spec.name, c.name)
    by_name = spec.by_name()
    for s in states:
        for alts in s.on.values():
            for target, _ in alts:
                assert target_allowed(s, by_name[target]), (spec.name, s.name, target)


def random_specs(count: int, seed: int) -> Iterator[Spec]:
    rng = random.Random(seed)
    made = tried = 0
    while made < count:
        tried += 1
        builder = Builder(random.Random(rng.getrandbits(64)), f"conf_{made:03d}")
        spec = builder.build()
        rename(spec, builder.rng)
        add_actions(spec, builder.rng)
        if repair(spec, builder):
            check_tree(spec)
            made += 1
            yield spec
    print(f"random specs: {made} kept of {tried} drawn", file=sys.stderr)


def sequences(spec: Spec, rng: random.Random) -> list[list[str]]:
    """Events drawn uniformly from the spec's own events: most are accepted somewhere in the
    spec, and the ones the active states do not accept test refusal."""
    events = spec.events()
    return [[rng.choice(events) for _ in range(EVENTS)] for _ in range(SEQUENCES)]


# ---- Running and writing ------------------------------------------------------------------

def run_xstate(jobs: list[dict[str, object]]) -> list[dict[str, object]]:
    done = subprocess.run(["node", str(HERE / "xstate_runner.mjs")], input=json.dumps(jobs),
                          capture_output=True, text=True, check=False, cwd=HERE)
    if done.returncode != 0:
        sys.exit(f"xstate_runner.mjs failed:\n{done.stderr}")
    results: list[dict[str, object]] = json.loads(done.stdout)
    return results


def xstate_version() -> str:
    package = json.loads((HERE / "node_modules" / "xstate" / "package.json").read_text())
    version: str = package["version"]
    return version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=200, help="random specs (default 200)")
    parser.add_argument("--seed", type=int, default=20250501)
    parser.add_argument("--out", type=Path, default=HERE / "traces")
    args = parser.parse_args()

    specs = fixed_specs() + list(random_specs(args.specs, args.seed))
    rng = random.Random(args.seed + 1)
    jobs = []
    for spec in specs:
        check_tree(spec)
        text = to_yaml(spec)
        if checked_text(text) is None:
            sys.exit(f"{spec.name}: `statechart check` refuses it:\n{text}")
        jobs.append({"name": spec.name, "yaml": text, "machine": xstate_config(spec),
                     "guards": spec.guards, "actions": spec.actions(),
                     "sequences": sequences(spec, rng)})
    results = run_xstate(jobs)
    version = xstate_version()
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("part-*.json.gz"):
        old.unlink()
    traces = []
    for job, result in zip(jobs, results, strict=True):
        assert result["name"] == job["name"]
        traces.append({"name": job["name"], "yaml": job["yaml"], "guards": job["guards"],
                       "actions": job["actions"], "initial": result["initial"],
                       "sequences": [{"events": seq, "steps": steps} for seq, steps
                                     in zip(job["sequences"], result["sequences"], strict=True)]})
    for i in range(0, len(traces), SPECS_PER_FILE):
        part = {"format": FORMAT, "xstate": version, "specs": traces[i:i + SPECS_PER_FILE]}
        data = json.dumps(part, separators=(",", ":")).encode()
        path = args.out / f"part-{i // SPECS_PER_FILE:02d}.json.gz"
        # mtime=0 and no file name in the header: the same traces give the same bytes.
        with path.open("wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as gz:
            gz.write(data)
    steps = sum(len(s["steps"]) for t in traces for s in t["sequences"])
    accepted = sum(st[0] for t in traces for s in t["sequences"] for st in s["steps"])
    ended = sum(1 for t in traces for s in t["sequences"] if s["steps"] and s["steps"][-1][3])
    print(f"{len(traces)} specs, {len(traces) * SEQUENCES} sequences of {EVENTS} events, "
          f"{steps} steps recorded ({accepted} accepted), {ended} sequences ended the run; "
          f"XState {version}", file=sys.stderr)


if __name__ == "__main__":
    main()

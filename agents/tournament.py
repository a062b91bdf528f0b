"""Duplicate-deal tournaments: per-entry win rate, penalty, last-trick rate and a Plackett-Luce rating.

``tournament(rules, ["guard", "random", "random", "random"], deals, seed)`` plays every
deal (match number ``m`` of ``seed``, ``m < deals``) once at every **table** of a seating
design: a table puts each entry (its position in the list) in one seat. All tables use the
same seed, so match ``m`` is dealt the same deck at each of them (round 1 gives seat ``s``
the same hand at every table; later rounds shuffle the same deck, dealt to the seats still
in). ``deals`` counts deals: ``deals * tables`` matches are played.

The seating design (``seating``) is :func:`agents.seatings.seatings`; the statistics are
:mod:`agents.tournament_stats`.

The agents of table ``t`` of ``n`` (for spec entries) are ``make_agent(spec,
agent_seed(seed, n, t), seat)``, and seats with the same spec then share the first such
seat's agent object (so it is asked once per step for all of them, which is faster and
keeps runs reproducible). With ``cyclic`` that is ``seed * P + r``, as before seatings
existed; a table of one entry against a field of another (the skill report's) is the same
under every design, so it plays the same matches.

An entry may also be an agent object (``act`` and a ``spec`` string, its label). The
entries are pickled together once, and every table, in this process or a spawned
worker, plays a fresh unpickled copy: the object passed in is never played, and its
state (a generator, say) starts alike at every table, so the numbers do not depend
on ``workers``. An object must therefore pickle (its class importable by module name,
no lambdas, locks or open files); one that does not raises ``TypeError``. Agents that ask
for the table (``meet_table``: the fictive player) are told every seat's agent
(:func:`agents.registry.introduce`).

The matches are played by :func:`agurk_env.matches.play_matches`, the loop behind
:func:`agurk_env.simulate.simulate` (same agents and deals), keeping only these
per-match numbers, not game records: building records costs about ten times the play.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.registry import introduce, make_agent, split_specs
from agents.seatings import SEATINGS, Entry, Seating, Seatings, seatings
from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agents.tournament_stats import UNITS, EntryStats, SeatStats, Unit, places, round_places, summarize
from agurk_env import engine
from agurk_env.agent import Agent
from agurk_env.matches import DEFAULT_BATCH, Step, play_matches, play_seatings
from agurk_env.rules import Rules, check_choice


def seat_stats(
    rules: Rules,
    agents: Sequence[Agent],
    n_matches: int,
    seed: int,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[int], object] | None = None,
    deck: np.ndarray | None = None,
) -> SeatStats:
    """Play matches ``0..n_matches-1`` of ``seed`` with one agent per seat; return their :class:`SeatStats`.

    The matches are played by :func:`agurk_env.matches.play_matches` (the loop behind
    ``simulate``), keeping only these numbers. ``progress(n_done)`` is called as matches end.
    ``deck`` (copies per card, :func:`agurk_env.engine.deck_counts`): deal from it instead of the rules' deck.
    """
    steps = play_matches(rules, agents, n_matches, seed, batch, deck)
    return _collect(rules, steps, n_matches, min(batch, n_matches), progress)


def seatings_stats(
    rules: Rules,
    agents: Sequence[Agent],
    seatings: np.ndarray,
    n_matches: int,
    seed: int,
    progress: Callable[[int], object] | None = None,
    deck: np.ndarray | None = None,
) -> list[SeatStats]:
    """:func:`seat_stats` of every seating ``(T, P)`` of ``agents`` (indices per seat), played in one batch.

    By :func:`agurk_env.matches.play_seatings`: one :class:`SeatStats` per table, by seat.
    """
    tables = len(seatings)
    steps = play_seatings(rules, agents, seatings, n_matches, seed, deck)
    return _collect(rules, steps, tables * n_matches, tables * n_matches, progress).split(tables)


def _collect(
    rules: Rules, steps: Iterator[Step], n: int, slots: int, progress: Callable[[int], object] | None
) -> SeatStats:
    """The :class:`SeatStats` of games ``0..n-1`` from a match loop's ``steps`` (``slots`` games side by side)."""
    sp = engine.tables(rules)
    p, h, a = sp.players, sp.hand_size, sp.actions
    every_trick = rules.scoring == "every_trick"
    res = SeatStats(
        win=np.zeros((n, p)),
        penalty=np.zeros((n, p), np.int64),
        rounds=np.zeros((n, p), np.int64),
        last=np.zeros((n, p), np.int64),
        place=np.zeros((n, p), np.int64),
        hands=np.zeros((n, p, a), np.int8),
    )
    penalty = np.zeros((slots, p), np.int64)
    rounds = np.zeros((slots, p), np.int64)
    last = np.zeros((slots, p), np.int64)
    out_round = np.full((slots, p), -1, np.int64)
    round_place: list[np.ndarray] = []
    round_match: list[np.ndarray] = []
    done = 0
    for step in steps:
        if step.kept is not None:
            penalty, rounds, last, out_round = (x[step.kept] for x in (penalty, rounds, last, out_round))
        state = step.after
        ended = np.flatnonzero(state.round_over)
        if not ended.size:
            continue
        first = ended[(state.round_no[ended] == 0) & (state.match_id[ended] < n)]
        if first.size:  # round 1's hands, rebuilt from the cards each seat played
            res.hands[state.match_id[first]] = engine.cards_played(rules, state.take(first), by_seat=True)
        pen = state.round_penalty[ended].astype(np.int64)
        in_round = state.tricks[ended, 0, :] >= 0
        penalty[ended] += pen
        rounds[ended] += in_round
        counted = state.match_id[ended] < n
        round_place.append(round_places(pen[counted], in_round[counted]))
        round_match.append(state.match_id[ended[counted]])
        took = np.zeros((ended.size, p), bool)
        took[np.arange(ended.size), state.trick_winner[ended, h - 1]] = True
        if not every_trick:
            took |= pen > 0
        last[ended] += took
        out_round[ended] = np.where(state.out_now[ended], state.round_no[ended, None], out_round[ended])
        over = np.flatnonzero(state.match_over)
        if over.size:
            ids = state.match_id[over]
            keep, ids = over[ids < n], ids[ids < n]
            winners = state.winners[keep]
            res.win[ids] = winners / np.maximum(winners.sum(1, keepdims=True), 1)  # no winner: 0 each
            res.penalty[ids], res.rounds[ids], res.last[ids] = penalty[keep], rounds[keep], last[keep]
            res.place[ids] = places(winners, out_round[keep])
            for acc in (penalty, rounds, last):
                acc[over] = 0
            out_round[over] = -1
            done += ids.size
            if progress is not None and ids.size:
                progress(done)
    res.round_place, res.round_match = np.concatenate(round_place), np.concatenate(round_match)
    return res


def agent_seed(seed: int, tables: int, table: int) -> int:
    """The ``make_agent`` seed of table ``table`` of ``tables``: ``seed * tables + table`` (one per table and seed)."""
    return seed * tables + table


@dataclass
class TournamentResult:
    """A finished tournament: its settings, the per-entry statistics and the raw per-table numbers."""

    rules: Rules
    specs: list[str]
    """The entries' labels: the spec strings, and ``agent.spec`` for agent objects."""
    seed: int
    deals: int
    batch: int
    resamples: int
    unit: Unit
    entries: list[EntryStats]
    seating: Seatings
    """The seating design played (:func:`seatings`)."""
    tables: list[SeatStats]
    """Per table played, the per-match numbers by seat."""

    @property
    def by_seating(self) -> list[SeatStats]:
        """Per seating counted, the per-match numbers by entry (what the statistics are computed from)."""
        return [self.tables[t].by_entry(seat) for t, seat in self.seating.views]

    @property
    def rounds_played(self) -> int:
        """Rounds played at all tables (each round counted once, however many seats it had)."""
        return sum(s.per_round()[1].size for s in self.tables)

    def to_dict(self) -> dict[str, object]:
        """The ``--json`` object: ``rules``, ``seed``, ``matches`` (deals), ``unit``, ``entries`` and the settings."""
        return {
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "matches": self.deals,
            "deals": self.deals,
            "seating": self.seating.design,
            "tables": len(self.tables),
            "seatings": len(self.seating.views),
            "matches_played": self.deals * len(self.tables),
            "rounds_played": self.rounds_played,
            "unit": self.unit,
            "batch": self.batch,
            "bootstrap_resamples": self.resamples,
            "rating_scale": "Elo-like: 400*log10(Plackett-Luce strength), centred to sum 0",
            "entries": [{"entry": i, **e.to_dict()} for i, e in enumerate(self.entries)],
        }


def parse_entries(spec_string: str, players: int) -> list[str]:
    """Split ``SPEC,SPEC,...``: ``AgentSpecError`` for an empty spec, ``ValueError`` unless one spec per seat."""
    specs = split_specs(spec_string)
    if len(specs) != players:
        raise ValueError(f"--agents needs exactly one spec per seat: {len(specs)} given for {players} players")
    return specs


def label(entry: Entry) -> str:
    """An entry's name in the results: the spec itself, or the agent object's ``spec``."""
    return entry if isinstance(entry, str) else entry.spec


def pack_entries(entries: Sequence[Entry], players: int, seed: int) -> bytes:
    """Check the entries and pickle them together (every table plays a fresh copy; see :func:`tournament`).

    Raises ``ValueError`` unless there is one entry per seat, ``agents.registry.AgentSpecError``
    for a bad spec (each is built once), ``TypeError`` for an object that is not an agent or
    cannot be pickled.
    """
    if len(entries) != players:
        raise ValueError(f"need exactly one entry per seat: {len(entries)} given for {players} players")
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            make_agent(entry, seed, i)
        elif not (callable(getattr(entry, "act", None)) and isinstance(getattr(entry, "spec", None), str)):
            raise TypeError(f"entry {i} is neither an agent spec nor an agent (act() and a str spec): {entry!r}")
    try:
        return pickle.dumps(list(entries))
    except (pickle.PicklingError, TypeError, AttributeError):
        for i, entry in enumerate(entries):
            try:
                pickle.dumps(entry)
            except (pickle.PicklingError, TypeError, AttributeError) as err:
                raise TypeError(
                    f"tournament entry {i} ({label(entry)!r}) cannot be pickled ({err}); every table plays a "
                    "pickled copy of an agent object, also in worker processes: define its class at module level "
                    "and keep no lambdas, locks or open files in it, or enter a registered spec"
                ) from None
        raise


def table_agents(entries: Sequence[Entry], table: np.ndarray, seed: int) -> list[Agent]:
    """The seats' agents at one table: seat ``s`` plays entry ``table[s]``, its agents seeded by ``seed``.

    A spec entry in seat ``s`` is ``make_agent(spec, seed, s)``, and seats with the same spec
    share the first such seat's agent (one call per step); an object entry sits as it is (the
    same object in two seats is one agent, asked once per step). Every agent that asks is told
    the table (:func:`agents.registry.introduce`).
    """
    first: dict[str, Agent] = {}
    agents = []
    for s, i in enumerate(table):
        entry = entries[i]
        if isinstance(entry, str) and entry not in first:
            first[entry] = make_agent(entry, seed, s)
        agents.append(first[entry] if isinstance(entry, str) else entry)
    return introduce(agents)


def play_table(
    rules: Rules,
    entries: Sequence[Entry],
    table: np.ndarray,
    agent_seed: int,
    deals: int,
    seed: int,
    batch: int,
    progress: Callable[[int], object] | None = None,
    deck: np.ndarray | None = None,
) -> SeatStats:
    """Play one table of a tournament (seat ``s``: entry ``table[s]``): its :class:`SeatStats`, by seat."""
    agents = table_agents(entries, table, agent_seed)
    return seat_stats(rules, agents, deals, seed, batch=batch, progress=progress, deck=deck)


def play_planned(
    progress: TaskProgress,
    rules: Rules,
    packed: bytes,
    table: np.ndarray,
    agent_seed: int,
    deals: int,
    seed: int,
    batch: int,
    deck: np.ndarray | None = None,
) -> SeatStats:
    """One table of a :class:`TournamentPlan` as a task: fresh copies of the entries play it (dealt from ``deck``)."""
    return play_table(rules, _unpack(packed), table, agent_seed, deals, seed, batch, progress, deck)


def _unpack(packed: bytes) -> list[Entry]:
    """A task's entries (specs or agent objects), unpickled; a clear error where a worker cannot import them."""
    try:
        return pickle.loads(packed)
    except (AttributeError, ImportError) as err:
        raise RuntimeError(
            f"a tournament worker process cannot load the agent objects ({err}): their classes must be importable "
            "by module name (not defined in an interactive session or notebook); or use workers=1"
        ) from None


def play_merged(
    progress: TaskProgress,
    rules: Rules,
    packed: bytes,
    tables: np.ndarray,
    agent_seed: int,
    deals: int,
    seed: int,
    deck: np.ndarray | None = None,
) -> SeatStats:
    """Every table ``(T, P)`` of a tournament as one task, side by side in one batch (:func:`seatings_stats`).

    One agent object per entry (``make_agent(spec, agent_seed, entry)``) plays all its seats,
    so an agent that draws random numbers draws other ones than at one table at a time. Entries
    that must know their table (the fictive player) are played table by table. The games are
    numbered ``t * deals + m``: :meth:`SeatStats.split` gives each table's numbers, by seat.
    """
    entries = _unpack(packed)
    agents = [make_agent(e, agent_seed, i) if isinstance(e, str) else e for i, e in enumerate(entries)]
    if not any(callable(getattr(agent, "meet_table", None)) for agent in agents):
        return SeatStats.join(seatings_stats(rules, agents, tables, deals, seed, progress, deck))
    parts = []
    for t, table in enumerate(tables):
        report = lambda n, base=t * deals: progress(base + n)  # noqa: E731
        parts.append(play_table(rules, entries, table, agent_seed, deals, seed, DEFAULT_BATCH, report, deck))
    return SeatStats.join(parts)


PARALLEL_MIN_MATCHES = 4000
"""Tournaments with fewer matches than this (deals x players) run in one process on the local backend, whatever
``workers``."""


@dataclass
class TournamentPlan:
    """A tournament laid out as tasks, one per table (:func:`plan_tournament`); :meth:`result` sums them up."""

    rules: Rules
    labels: list[str]
    seed: int
    deals: int
    batch: int
    resamples: int
    unit: Unit
    design: Seatings
    tasks: list[tuple[Any, ...]]
    """Per table, the arguments of :func:`play_planned` after ``progress``."""

    @property
    def names(self) -> list[str]:
        """Per table, what its task is called in errors and progress."""
        return [
            f"tournament table {t} (seats: {', '.join(self.labels[i] for i in table)})"
            for t, table in enumerate(self.design.tables)
        ]

    def result(self, tables: list[SeatStats]) -> TournamentResult:
        """The finished tournament from every table's numbers (in table order)."""
        result = TournamentResult(
            self.rules,
            self.labels,
            self.seed,
            self.deals,
            self.batch,
            self.resamples,
            self.unit,
            [],
            self.design,
            tables,
        )
        result.entries = summarize(self.labels, result.by_seating, self.seed, self.resamples, self.unit)
        return result


def plan_tournament(
    rules: Rules,
    specs: Sequence[Entry],
    deals: int,
    seed: int,
    batch: int = DEFAULT_BATCH,
    resamples: int = 1000,
    unit: Unit = "match",
    seating: Seating = "auto",
    deck: np.ndarray | None = None,
) -> TournamentPlan:
    """Check the settings and lay :func:`tournament` out as one task per table (run them with :func:`play_planned`)."""
    check_choice("unit", unit, UNITS)
    check_choice("seating", seating, SEATINGS)
    if deals < 1 or resamples < 1 or seed < 0:
        raise ValueError(f"deals and resamples must be >= 1 and seed >= 0, not {deals}, {resamples} and {seed}")
    packed = pack_entries(specs, rules.players, seed)
    design = seatings(specs, seating)
    n = len(design.tables)
    tasks = [
        (rules, packed, table, agent_seed(seed, n, t), deals, seed, batch, deck)
        for t, table in enumerate(design.tables)
    ]
    return TournamentPlan(rules, [label(entry) for entry in specs], seed, deals, batch, resamples, unit, design, tasks)


def tournament(
    rules: Rules,
    specs: Sequence[Entry],
    deals: int,
    seed: int,
    batch: int = DEFAULT_BATCH,
    resamples: int = 1000,
    progress: Callable[[int], object] | None = None,
    workers: int = 1,
    unit: Unit = "match",
    backend: Backend = LOCAL,
    seating: Seating = "auto",
    deck: np.ndarray | None = None,
) -> TournamentResult:
    """Play ``deals`` duplicate deals at every table of the ``seating`` design of ``specs`` (one per seat); summarize.

    An entry is a registered spec or an agent object. Every table plays a fresh copy of
    the objects (all pickled together once, so the object passed in is never played or
    changed, and its state, e.g. a generator, starts alike at every table and in every process);
    an object that cannot be pickled raises ``TypeError``. ``unit`` is what the statistics
    count, ``"match"`` or ``"round"`` (see the module docstring); the play is the same.
    ``seating`` is ``"auto"``, ``"permutations"``, ``"balanced"`` or ``"cyclic"`` (see the
    module docstring). ``progress(n_done)`` counts matches over all tables (``deals * tables``).
    ``deck`` (copies per card, :func:`agurk_env.engine.deck_counts`) deals from a smaller deck than the rules'.
    Each table is one task of :func:`agents.tasks.run_tasks` on ``backend``: with the
    local backend and ``workers > 1`` (and at least :data:`PARALLEL_MIN_MATCHES` matches) the
    tables run in that many spawned worker processes, on ``Backend("ray")`` as Ray tasks
    (``workers`` CPUs if it starts a local Ray instance); the workers must be able to import the
    objects' classes, and the numbers are the same on every backend. A table that fails
    every retry raises :class:`agents.tasks.TaskError`. Entries are checked
    (``agents.registry.AgentSpecError`` for a bad spec) before anything is played.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, not {workers}")
    plan = plan_tournament(rules, specs, deals, seed, batch, resamples, unit, seating, deck)
    n = len(plan.tasks)
    if backend.kind == "local" and deals * n < PARALLEL_MIN_MATCHES:
        workers = 1

    def on_progress(units: list[float], stages: list[int]) -> None:
        if progress is not None:
            progress(int(sum(units)))

    tables = run_tasks(
        play_planned,
        plan.tasks,
        min(workers, n),
        backend,
        names=plan.names,
        on_progress=None if progress is None else on_progress,
    )
    return plan.result(tables)

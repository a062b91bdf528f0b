"""The leaderboard: any set of agents rated at one table, from duplicate-deal games.

**The games.** With ``P`` seats (``rules.players``) and ``N`` agents, a *group* is one list of ``P``
entries (agents, in the order of their spec strings, an agent in several seats repeated), played as
one tournament of :func:`agents.tournament.plan_tournament`: each deal at every seating of it (all
distinct arrangements up to 24, the balanced design above: :mod:`agents.seatings`; entries of one
agent take its seats in turn, so each agent sits in every seat equally often). The design
(:func:`design_groups`) chooses the groups: ``pairs`` (the default), every pair of agents alone at
the table, ``ceil(P/2)`` seats against ``floor(P/2)`` (and the mirror at odd ``P``), so how two
agents fare against each other depends on them only; ``subsets``, every ``P``-subset of ``N >= P``
agents, each pair meeting in ``C(N - 2, P - 2)`` mixed groups. Every group plays the same duplicate
deals (match ``m`` of ``seed``, ``m < deals``). A group's numbers depend on its own entries only
(never on the other agents, nor on the order of ``--agents``), so with a :class:`skill.cache.TaskCache`
a leaderboard that adds an agent plays only the groups with it: its ``N`` pairs of the ``C(N + 1, 2)``.

**One rating model** on every game at once: the Plackett-Luce fit of
:func:`agents.tournament_stats.fit_plackett_luce` to the finishing orders of every match (the
agents absent from a group take no part in its orders), on the Elo scale
(:data:`agents.tournament_stats.RATING_SCALE`, centred to mean 0), with 95% percentile bootstrap
intervals over deals: deals are resampled jointly, each with all its matches at every seating
of every group (:func:`agents.tournament_stats.deal_resamples`). An agent in two seats is two
entries of one strength in the orders.

**Nash averaging** (Balduzzi et al. 2018, "Re-evaluating evaluation"): the meta-game's payoff
``A[i, j]`` is agent ``i``'s finishing-order advantage over ``j`` in the groups where both sit,
``P(i finishes ahead of j) - P(j finishes ahead of i)`` over those matches (ties count for
neither; antisymmetric). :func:`max_entropy_nash` finds its maximum-entropy Nash equilibrium
``p``, and an agent's Nash rating is its payoff against it, ``(A p)_i``: 0 for the agents ``p``
plays, below 0 for the others (how much they lose against the equilibrium mixture). In a given
meta-game, an exact copy of an agent shares its equilibrium weight and leaves every other Nash
rating as it was. In the ``pairs`` design ``A[i, j]`` comes from the pair's own tables, so adding an
agent leaves the meta-game of the others as it was, and a copy leaves their Nash ratings; in the
``subsets`` design at 3 or more seats an added agent also sits beside the other pairs, which changes
their head-to-head numbers: docs/leaderboard.md measures it.

**People** (:mod:`skill.people`): a person's finishing orders in matches at the same table against
the agents (``agurk serve``'s duplicate games, read by the application) rate them on the same
scale, the agents' strengths held at their fit; a person has no Nash rating.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from agents.tasks import LOCAL, Backend, run_tasks
from agents.tournament import TournamentPlan, plan_tournament, play_merged
from agents.tournament_stats import SeatStats, deal_resamples, fit_plackett_luce, ratings, stages
from agurk_env.atomic import atomic_write_text
from agurk_env.matches import DEFAULT_BATCH
from agurk_env.rules import Rules
from skill.cache import TaskCache
from skill.people import PREFIX, PersonMatches, RatedPerson, check_person, rate_person

if TYPE_CHECKING:
    from rich.table import Table
    from scipy.optimize._typing import _ConstraintDict

RESAMPLES = 1000
"""Bootstrap resamples of the rating intervals."""
SUPPORT_TOL = 1e-7
"""An agent is in the equilibrium's support when some Nash equilibrium plays it with more than this probability."""
Design = Literal["pairs", "subsets"]
DESIGNS: tuple[str, ...] = get_args(Design)
"""The leaderboard's designs, which groups of agents sit at its tables (:func:`design_groups`)."""
FILES = ("leaderboard.json", "leaderboard.md", "leaderboard.png")
"""What :func:`write_leaderboard` writes into its folder."""
PEOPLE_RATING = (
    "person:NAME rows: the person's finishing orders in their duplicate matches at this table (agurk serve --db), "
    "against these agents, rated by the same Plackett-Luce model with every agent's strength held at this fit (the "
    "agents' rows do not move); 95% bootstrap over the person's matches, each resample paired with one of the agents' "
    "resamples over deals; no Nash rating (the meta-game is the agents')"
)
"""What ``leaderboard.json``'s ``people`` says of the ``person:NAME`` rows (there when people are rated)."""
Progress = Callable[[int, int], None]
"""``progress(matches_done, matches)``: the matches played so far (the cached ones count as done) of all."""


def check_agents(specs: Sequence[str], players: int, design: Design = "pairs") -> None:
    """Raise ``ValueError`` (one line) unless ``specs`` are at least 2 (``subsets``: ``players``) different specs."""
    if len(specs) < 2:
        raise ValueError(f"a leaderboard needs at least 2 agents, not {len(specs)}")
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} named twice: name every agent once")
    if design == "subsets" and len(specs) < players:
        raise ValueError(
            f"{len(specs)} agents cannot fill a table of {players} players with different agents: give at least "
            f"{players}, fewer players (--set players=N), or --design pairs"
        )


def design_groups(specs: Sequence[str], players: int, design: Design) -> list[tuple[int, ...]]:
    """The groups of ``design``: per group, the agent (index into ``specs``) of each seat's entry, specs sorted.

    ``pairs``: per pair ``i, j`` (``specs[i] < specs[j]``), ``ceil(P/2)`` entries of ``i`` and
    ``floor(P/2)`` of ``j``, and at odd ``P`` the mirror (``floor`` of ``i``, ``ceil`` of ``j``), so
    neither has more seats; ``subsets``: every ``P``-subset of the agents, one entry each.
    """
    order = sorted(range(len(specs)), key=lambda i: specs[i])
    if design == "subsets":
        return list(itertools.combinations(order, players))
    return [(i,) * a + (j,) * b for i, j in itertools.combinations(order, 2) for a, b in pair_splits(players)]


def pair_splits(players: int) -> list[tuple[int, int]]:
    """A pair's seats, first agent against second: ``(ceil(P/2), floor(P/2))``, and its mirror at odd ``P``."""
    high, low = (players + 1) // 2, players // 2
    return [(high, low)] + ([(low, high)] if high != low else [])


def describe(design: Design, players: int, agents: int) -> str:
    """What ``design``'s groups are, in words (``leaderboard.json``'s ``groups``, ``leaderboard.md``)."""
    if design == "subsets":
        return f"every {players}-subset of the {agents} agents"
    (high, low), *mirrored = pair_splits(players)
    mirror = f", and {low} against {high}" if mirrored else ""
    return f"every pair of the {agents} agents alone at the table, {high} seats against {low}{mirror}"


@dataclass(frozen=True)
class LeaderboardPlan:
    """The groups of a leaderboard, each one tournament of :func:`agents.tournament.plan_tournament`."""

    rules: Rules
    specs: list[str]
    """The agents, as given."""
    design: Design
    """Which groups are played (:func:`design_groups`)."""
    deals: int
    seed: int
    batch: int
    resamples: int
    groups: list[tuple[int, ...]]
    """Per group, the agent (index into ``specs``) of each entry, in entry order (their specs sorted)."""
    plans: list[TournamentPlan]
    """Per group, its tournament."""

    @property
    def tasks(self) -> list[tuple[int, int]]:
        """Every table played, as ``(group, table of its tournament)``."""
        return [(g, t) for g, plan in enumerate(self.plans) for t in range(len(plan.tasks))]

    @property
    def matches(self) -> int:
        """Matches played in all: deals x tables."""
        return self.deals * len(self.tasks)


def plan_leaderboard(
    rules: Rules,
    specs: Sequence[str],
    deals: int,
    seed: int,
    design: Design = "pairs",
    batch: int = DEFAULT_BATCH,
    resamples: int = RESAMPLES,
) -> LeaderboardPlan:
    """Lay the leaderboard of ``specs`` out: every group of ``design`` (:func:`design_groups`) a tournament.

    Raises ``ValueError`` for too few or repeated agents (:func:`check_agents`) and
    ``agents.registry.AgentSpecError`` for a bad spec.
    """
    specs = [s.strip() for s in specs]
    check_agents(specs, rules.players, design)
    groups = design_groups(specs, rules.players, design)
    plans = [plan_tournament(rules, [specs[i] for i in group], deals, seed, batch, resamples) for group in groups]
    return LeaderboardPlan(rules, specs, design, deals, seed, batch, resamples, groups, plans)


@dataclass(frozen=True)
class Played:
    """Every table's numbers (per group, per table of its tournament) and how many were played, not read."""

    tables: list[list[SeatStats]]
    played: int
    cached: int


def _init_worker() -> None:
    """One torch thread in each worker process (when torch is there): one core per table."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def play_leaderboard(
    plan: LeaderboardPlan,
    workers: int = 1,
    backend: Backend = LOCAL,
    cache: TaskCache | None = None,
    progress: Progress | None = None,
) -> Played:
    """Play every group of ``plan`` on ``backend`` (a group stored in ``cache`` is read, each one played is stored).

    Each group is one task of :func:`agents.tasks.run_tasks`: its tables side by side in one
    batch (:func:`agents.tournament.play_merged`), seeded by its arguments alone, so the numbers
    are the same with any ``workers`` or backend, with or without the cache.
    """
    groups = range(len(plan.plans))
    found: dict[int, list[SeatStats]] = {}
    materials = [_group_material(cache, tournament) for tournament in plan.plans]
    for g in groups:
        stored = None if cache is None else cache.load(materials[g])
        if stored is not None:
            found[g] = stored.split(len(plan.plans[g].tasks))
    todo = [g for g in groups if g not in found]
    before = sum(len(plan.plans[g].tasks) for g in found) * plan.deals

    def on_progress(units: list[float], stages: list[int]) -> None:
        if progress is not None:
            progress(before + int(sum(units)), plan.matches)

    def on_result(index: int, stats: SeatStats) -> None:
        if cache is not None:
            cache.store(materials[todo[index]], stats)

    if progress is not None:
        progress(before, plan.matches)
    played = run_tasks(
        play_merged,
        [_group_task(plan.plans[g]) for g in todo],
        min(workers, max(len(todo), 1)),
        backend,
        names=[f"leaderboard group {g} ({', '.join(plan.plans[g].labels)})" for g in todo],
        initializer=_init_worker,
        on_progress=on_progress,
        on_result=on_result,
        every=0.5,
    )
    for g, stats in zip(todo, played, strict=True):
        found[g] = stats.split(len(plan.plans[g].tasks))
    if progress is not None:
        progress(plan.matches, plan.matches)
    tables = sum((len(plan.plans[g].tasks) for g in todo), 0)
    return Played([found[g] for g in groups], tables, len(plan.tasks) - tables)


def _group_task(tournament: TournamentPlan) -> tuple[Any, ...]:
    """The arguments of :func:`agents.tournament.play_merged` for a group's tournament (after ``progress``)."""
    rules, packed, _, _, deals, deal_seed, _, deck = tournament.tasks[0]
    seats = np.stack([task[2] for task in tournament.tasks])
    return rules, packed, seats, tournament.seed, deals, deal_seed, deck


def _group_material(cache: TaskCache | None, tournament: TournamentPlan) -> str:
    """The cache key material of a group: every table's (:meth:`TaskCache.material`), played side by side."""
    if cache is None:
        return ""
    tables = [json.loads(cache.material(task, tournament.labels)) for task in tournament.tasks]
    return json.dumps({"merged": True, "agent_seed": tournament.seed, "tables": tables}, sort_keys=True)


def group_places(plan: LeaderboardPlan, tables: list[list[SeatStats]], group: int) -> np.ndarray:
    """``(seatings * deals, P)`` finishing levels of a group's matches by entry (seating after seating)."""
    design = plan.plans[group].design
    return np.concatenate([tables[group][t].by_entry(seat).place for t, seat in design.views])


def pooled_stages(plan: LeaderboardPlan, tables: list[list[SeatStats]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Plackett-Luce stages of every match of every group, over all agents: ``(chosen, risk, counts)``.

    Each group's stages (:func:`agents.tournament_stats.stages`, over its entries) are widened to
    every agent (the others in no risk set) and merged: ``chosen`` and ``risk`` ``(S, N)`` counts of
    each agent's entries (0 or 1 but for an agent in several seats), ``counts`` ``(deals, S)`` how
    often each deal holds each stage.
    """
    n = len(plan.specs)
    wide, parts = [], []
    for g, group in enumerate(plan.groups):
        place = group_places(plan, tables, g)
        st = stages(place, np.tile(np.arange(plan.deals), place.shape[0] // plan.deals), plan.deals)
        agent = np.eye(n, dtype=np.int64)[list(group)]  # (E, N): each entry's agent
        wide.append(np.hstack([st.chosen @ agent, st.risk @ agent]))  # chosen, then risk, over every agent
        parts.append(st.counts)
    unique, inverse = np.unique(np.concatenate(wide), axis=0, return_inverse=True)
    ends = np.cumsum([0, *(c.shape[1] for c in parts)])
    counts = np.zeros((plan.deals, unique.shape[0]))
    for k, group_counts in enumerate(parts):
        counts[:, inverse.reshape(-1)[ends[k] : ends[k + 1]]] += group_counts  # a group's stages are distinct
    return unique[:, :n], unique[:, n:], counts


def strengths(plan: LeaderboardPlan, tables: list[list[SeatStats]]) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce log-strengths ``(N,)`` of one fit to every match, and of each bootstrap resample ``(R, N)``.

    The bootstrap resamples deals jointly across every group and seating.
    """
    chosen, risk, counts = pooled_stages(plan, tables)
    full = counts.sum(0, keepdims=True)
    theta = fit_plackett_luce(chosen, risk, full)[0]
    boot = []
    for weights in deal_resamples(
        plan.seed, plan.deals, plan.resamples, chunk=4_000_000 // max(plan.deals, chosen.size)
    ):
        boot.append(fit_plackett_luce(chosen, risk, weights @ counts))
    return theta, np.concatenate(boot)


def rate(theta: np.ndarray, boot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rating, low, high)``: the ratings ``(N,)`` of :func:`strengths`' fit and their 95% percentile intervals."""
    low, high = np.percentile(ratings(boot), [2.5, 97.5], axis=0)
    return ratings(theta), low, high


def head_to_head(plan: LeaderboardPlan, tables: list[list[SeatStats]]) -> np.ndarray:
    """The meta-game ``(N, N)``: ``A[i, j]``, agent i's finishing-order advantage over agent j.

    ``A[i, j] = (ahead - behind) / comparisons`` over every entry of ``i`` against every entry of
    ``j`` in every match of every group with both: +1 when ``i``'s finishes ahead, -1 when behind, 0
    on a tie (two entries of one agent add up to 0). ``A`` is antisymmetric, its diagonal 0.
    """
    n = len(plan.specs)
    score = np.zeros((n, n), np.int64)
    shared = np.zeros((n, n), np.int64)
    for g, group in enumerate(plan.groups):
        place = group_places(plan, tables, g)
        for (a, i), (b, j) in itertools.permutations(enumerate(group), 2):
            score[i, j] += int(np.sign(place[:, b] - place[:, a]).sum())
            shared[i, j] += place.shape[0]
    return np.divide(score, shared, out=np.zeros((n, n)), where=shared > 0)


def max_entropy_nash(payoff: np.ndarray) -> np.ndarray:
    """The maximum-entropy Nash equilibrium of the symmetric zero-sum game of antisymmetric ``payoff`` (row's).

    The game's value is 0, so the equilibria are the mixtures ``p`` (``p >= 0``, ``sum p = 1``)
    with ``payoff @ p <= 0``: a polytope. One linear program per strategy (SciPy's HiGHS) finds the
    largest probability any equilibrium gives it, hence the support ``S`` (every strategy some
    equilibrium plays) and a point inside; every equilibrium has ``(payoff @ p)_i = 0`` for
    ``i`` in ``S``, so every equilibrium lies in that point plus the null space of those rows (and
    of the sum); the entropy is maximized there (SLSQP, the other rows' ``<= 0`` kept), which
    moves nothing when the equilibrium is unique (the generic case).
    """
    from scipy.linalg import null_space
    from scipy.optimize import linprog, minimize

    a = np.asarray(payoff, np.float64)
    n = a.shape[0]
    if a.shape != (n, n) or not np.array_equal(a, -a.T):
        raise ValueError("the payoff matrix must be square and antisymmetric")
    points = np.zeros((n, n))
    for i in range(n):
        found = linprog(
            -np.eye(n)[i], A_ub=a, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0], bounds=(0, None), method="highs"
        )
        if found.status != 0:
            raise RuntimeError(f"the equilibrium LP failed: {found.message}")
        x = found.x
        assert x is not None  # the LP solved (status 0)
        points[i] = np.clip(x, 0.0, None)
    support = np.flatnonzero(np.diag(points) > SUPPORT_TOL)
    others = np.setdiff1d(np.arange(n), support)
    start = points[support][:, support].mean(0)
    start /= start.sum()
    basis = null_space(np.vstack([a[np.ix_(support, support)], np.ones((1, support.size))]))
    p = start
    if basis.shape[1]:
        rest = a[np.ix_(others, support)]

        def neg_entropy(z: np.ndarray) -> tuple[float, np.ndarray]:
            q = np.maximum(start + basis @ z, 1e-300)
            return float((q * np.log(q)).sum()), basis.T @ (np.log(q) + 1.0)

        # scipy-stubs type a constraint's fun as returning one float; SLSQP takes a vector of them (each >= 0)
        constraints: list[_ConstraintDict] = [
            {"type": "ineq", "fun": lambda z: start + basis @ z, "jac": lambda z: basis}  # type: ignore[misc]
        ]
        if others.size:
            constraints.append(
                {"type": "ineq", "fun": lambda z: -rest @ (start + basis @ z), "jac": lambda z: -rest @ basis}  # type: ignore[misc]
            )
        best = minimize(
            neg_entropy,
            np.zeros(basis.shape[1]),
            jac=True,
            method="SLSQP",
            constraints=constraints,
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        p = np.maximum(start + basis @ best.x, 0.0)
    out = np.zeros(n)
    out[support] = p / p.sum()
    return out


@dataclass(frozen=True)
class Leaderboard:
    """A rated leaderboard: the plan, the ratings with their intervals, the meta-game and its Nash averaging."""

    plan: LeaderboardPlan
    rating: np.ndarray
    low: np.ndarray
    high: np.ndarray
    payoff: np.ndarray
    """``(N, N)``: :func:`head_to_head`'s meta-game."""
    nash: np.ndarray
    """``(N,)``: its maximum-entropy Nash equilibrium."""
    people: tuple[RatedPerson, ...] = ()
    """The people rated against the agents (:mod:`skill.people`), outside the meta-game."""

    @property
    def nash_rating(self) -> np.ndarray:
        """Each agent's payoff against the equilibrium, ``payoff @ nash`` (0 for the agents it plays, else < 0)."""
        return self.payoff @ self.nash

    def ranked(self) -> list[dict[str, Any]]:
        """Every entry, agents then people, by rating, highest first (ties by spec), as the JSON lists them."""
        nash_rating = self.nash_rating
        entries = [
            (
                self.rating[i],
                spec,
                self.low[i],
                self.high[i],
                {"nash_rating": nash_rating[i], "nash_weight": self.nash[i]},
            )
            for i, spec in enumerate(self.plan.specs)
        ]
        entries += [
            (p.rating, p.spec, p.low, p.high, {"nash_rating": None, "nash_weight": None, "matches": p.matches})
            for p in self.people
        ]
        entries.sort(key=lambda e: (-e[0], e[1]))
        return [
            {
                "rank": rank,
                "spec": spec,
                "rating": _round(rating),
                "rating_ci": [_round(low), _round(high)],
                **{k: v if v is None or k == "matches" else _round(v) for k, v in rest.items()},
            }
            for rank, (rating, spec, low, high, rest) in enumerate(entries, 1)
        ]

    def to_dict(self, command: str) -> dict[str, Any]:
        """The ``leaderboard.json`` object (``command`` reproduces it)."""
        plan = self.plan
        data = {
            "command": command,
            "rules": plan.rules.to_dict(),
            "players": plan.rules.players,
            "hand_size": plan.rules.hand_size,
            "deals": plan.deals,
            "seed": plan.seed,
            "batch": plan.batch,
            "bootstrap_resamples": plan.resamples,
            "design": plan.design,
            "groups": (
                f"{describe(plan.design, plan.rules.players, len(plan.specs))}, each group at every seating of its "
                f"{plan.plans[0].design.design} design, on the same {plan.deals} duplicate deals"
            ),
            "tables": [
                {"agents": [plan.specs[i] for i in group], "seatings": len(p.tasks)}
                for group, p in zip(plan.groups, plan.plans, strict=True)
            ],
            "matches": plan.matches,
            "rating_scale": "Elo-like: 400*log10(Plackett-Luce strength), centred to mean 0; 95% bootstrap over deals",
            "nash": {
                "payoff": "A[i][j] = P(i finishes ahead of j) - P(j ahead of i), in the matches both played",
                "agents": plan.specs,
                "payoff_matrix": [[_round(x) for x in row] for row in self.payoff],
                "equilibrium": [_round(x) for x in self.nash],
                "gap": _round(max(float((self.payoff @ self.nash).max()), 0.0)),
            },
            "agents": self.ranked(),
        }
        if self.people:
            data["people"] = PEOPLE_RATING
        return data


def _round(x: float) -> float:
    """A figure as the files write it: 6 decimals (and never -0.0)."""
    return round(float(x), 6) + 0.0


def leaderboard(
    plan: LeaderboardPlan, tables: list[list[SeatStats]], people: Sequence[PersonMatches] = ()
) -> Leaderboard:
    """Rate the played tables of ``plan`` (ratings with intervals, the Nash averaging), then ``people`` against them.

    Raises ``ValueError`` (one line) for a person whose matches seat others than ``plan``'s agents.
    """
    for person in people:
        check_person(plan.specs, plan.rules.players, person)
    theta, boot = strengths(plan, tables)
    rating, low, high = rate(theta, boot)
    payoff = head_to_head(plan, tables)
    rated = tuple(rate_person(plan.specs, theta, boot, person, plan.seed) for person in people)
    return Leaderboard(plan, rating, low, high, payoff, max_entropy_nash(payoff), rated)


def write_leaderboard(board: Leaderboard, out: Path, command: str) -> dict[str, Any]:
    """Write ``leaderboard.json``, ``leaderboard.md`` and ``leaderboard.png`` into ``out``; return the JSON object."""
    data = board.to_dict(command)
    atomic_write_text(out / "leaderboard.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(out / "leaderboard.md", markdown(data))
    plot(data, out / "leaderboard.png")
    return data


def markdown(data: dict[str, Any]) -> str:
    """``leaderboard.md``: the settings, the ranked table and how to read it."""
    tables = data["tables"]
    seatings = sum(t["seatings"] for t in tables)
    lines = [
        "# Leaderboard",
        "",
        f"{len(data['nash']['agents'])} agents at {data['players']} players, {data['hand_size']} cards each, "
        f"{data['design']} design: {_count(len(tables), 'group')} ({data['groups']}; seed {data['seed']}), "
        f"{seatings:,} tables: {data['matches']:,} matches.",
        "",
        "| rank | agent | rating | 95% interval | Nash rating | Nash weight |",
        "|---:|---|---:|---|---:|---:|",
    ]
    for a in data["agents"]:
        low, high = a["rating_ci"]
        lines.append(
            f"| {a['rank']} | `{a['spec']}` | {a['rating']:.0f} | [{low:.0f}, {high:.0f}] | "
            f"{_figure(a['nash_rating'], '+.3f')} | {_figure(a['nash_weight'], '.3f')} |"
        )
    if "people" in data:
        lines += ["", f"People: {data['people']}."]
    lines += [
        "",
        "Rating: one Plackett-Luce fit to the finishing orders of every match, Elo scale (an agent D points above "
        "another finishes ahead of it with probability 1 / (1 + 10^(-D/400))), mean 0; the interval is a 95% "
        "bootstrap over deals.",
        "",
        "Nash rating: the agent's finishing-order advantage (P(ahead) - P(behind), from -1 to 1) against the "
        "maximum-entropy Nash equilibrium of the head-to-head meta-game, whose weights are the last column: 0 for "
        "the agents it plays, below 0 by what the others lose against it. In a given meta-game a copy of an agent "
        "shares its weight and moves no other Nash rating; docs/leaderboard.md says how to read it.",
        "",
        "Reproduce:",
        "",
        "```bash",
        data["command"],
        "```",
        "",
    ]
    return "\n".join(lines)


def table(data: dict[str, Any]) -> Table:
    """The ranked agents (and people) as a rich table: rating with its 95% interval, Nash rating and weight."""
    from rich.table import Table

    title = f"leaderboard: {data['players']} players, {data['deals']} deals, seed {data['seed']}"
    ranked = Table(title=title, title_justify="left")
    for name in ("rank", "agent", "rating [95% CI]", "Nash rating", "Nash weight"):
        ranked.add_column(name, justify="left" if name == "agent" else "right")
    for a in data["agents"]:
        low, high = a["rating_ci"]
        ranked.add_row(
            str(a["rank"]),
            a["spec"],
            f"{a['rating']:.0f} [{low:.0f}, {high:.0f}]",
            "-" if a["nash_rating"] is None else f"{a['nash_rating']:+.3f}",
            "-" if a["nash_weight"] is None else f"{a['nash_weight']:.3f}",
        )
    return ranked


def plot(data: dict[str, Any], path: Path) -> None:
    """``leaderboard.png``: the ratings with their 95% intervals, and the Nash ratings, ranked."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from skill.plots import save

    agents = data["agents"]
    names = [a["spec"] for a in agents]
    y = np.arange(len(agents))[::-1]
    rating = np.array([a["rating"] for a in agents])
    ci = np.array([a["rating_ci"] for a in agents])
    err = np.stack([rating - ci[:, 0], ci[:, 1] - rating]).clip(0)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(10, 1.4 + 0.4 * len(agents)), sharey=True, gridspec_kw={"width_ratios": [3, 2]}
    )
    person = np.array([a["spec"].startswith(PREFIX) for a in agents])
    left.errorbar(rating[~person], y[~person], xerr=err[:, ~person], fmt="o", capsize=3)
    if person.any():
        left.errorbar(rating[person], y[person], xerr=err[:, person], fmt="s", capsize=3, color="tab:green")
    left.axvline(0, color="grey", lw=0.8)
    left.set_yticks(y, names)
    left.set_xlabel("rating (Plackett-Luce, Elo scale), 95% interval")
    nash = np.array([np.nan if a["nash_rating"] is None else a["nash_rating"] for a in agents])
    right.hlines(y, 0, nash, color="tab:orange")
    right.plot(nash, y, "o", color="tab:orange")
    for a, row in zip(agents, y, strict=True):
        if a["nash_weight"]:
            right.annotate(
                f"weight {a['nash_weight']:.2f}", (a["nash_rating"], row), (6, 4), textcoords="offset points"
            )
    right.axvline(0, color="grey", lw=0.8)
    right.set_xlim(min(np.nanmin(nash), 0) * 1.1 - 0.05, 0.3)
    right.set_xlabel("Nash rating (advantage vs the equilibrium)")
    fig.suptitle(
        f"{data['players']} players, {data['hand_size']} cards, {data['deals']} deals, seed {data['seed']}",
        fontsize=10,
    )
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def _figure(x: float | None, spec: str) -> str:
    """A number of the table, ``-`` where there is none (a person's Nash rating)."""
    return "-" if x is None else format(x, spec)


def _count(n: int, noun: str) -> str:
    """``1 group``, ``4 groups``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"

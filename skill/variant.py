"""One variant of a skill report: train its PPO agent, play the ladder against the field, compute the statistics.

:func:`run_variant` is what each worker process runs. Everything in it is seeded from the
report's seed: the PPO agent's training (``Config.seed``) and every tournament (the same
deals for every ladder agent, so its numbers are compared on common deals). A variant is a
preset at a player count and (optionally) a hand size: one cell of the variant atlas
(:mod:`skill.cells`). With the budget's ``policy`` ``zoo`` nothing is trained: the shipped
policy the zoo plays at every table (the universal network) takes the PPO agent's place on the ladder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

import numpy as np

from agents.tournament import TournamentPlan, TournamentResult, plan_tournament, play_planned
from agents.tournament_stats import SeatStats
from agurk_env import seeds
from agurk_env.rules import Rules
from skill.budget import CHEATING, FICTIVE, FIELD, RANDOM, TRAIN_COST, Budget, ladder, match_cost
from skill.control_variates import Captured, capture, corrected, fit
from skill.stats import FocalData, focal_data, skill_stats

EFFECT_KEYS = ("learning_win", "random_win", "learning_penalty", "random_penalty")
"""The learning and random effects of a variant (:mod:`skill.stats`), each with its ``KEY_ci``."""
Interval = list[float | None]
"""``[low, high]``: a 95% bootstrap interval (``None``: unbounded or undefined)."""
CV_KEYS = ("rs_win", "learning_win", "random_win")
"""The statistics by win rate that the control variates correct (each kept plain as ``KEY_plain``)."""
CV_STAGE = "control variates"
"""The stage a variant reports while its best agent's matches are captured for the control variates."""


class ControlVariates(TypedDict):
    """How a variant's win-rate statistics were corrected for deal luck (:mod:`skill.control_variates`)."""

    agent: str
    """The agent whose results were corrected: the best real agent by win rate."""
    fit_deals: int
    """The separate deals the coefficients were fitted on."""
    halfwidth_plain: float | None
    """RS (win rate) 95% half-width, plain."""
    halfwidth: float | None
    """RS (win rate) 95% half-width, corrected (same deals, same resamples)."""


class LadderRow(TypedDict):
    """One ladder agent in a variant: its focal win rate, mean penalty and rating, each with its interval."""

    spec: str
    win_rate: float
    win_rate_ci: list[float]
    mean_penalty: float
    mean_penalty_ci: list[float]
    rating: float
    rating_ci: list[float]


class VariantRow(TypedDict):
    """A variant's object in ``report.json`` (an atlas cell's in ``atlas.json``): its rules, statistics and ladder."""

    rank: NotRequired[int]
    """1 = most skill, once ranked."""
    preset: str
    players: int
    hand_size: int
    rules: dict[str, Any]
    rs_win: float | None
    rs_win_ci: Interval
    rs_win_plain: NotRequired[float | None]
    """RS by win rate without the control variates (``rs_win`` has them); likewise the two effects below."""
    rs_win_ci_plain: NotRequired[Interval]
    learning_win_plain: NotRequired[float]
    learning_win_ci_plain: NotRequired[Interval]
    random_win_plain: NotRequired[float]
    random_win_ci_plain: NotRequired[Interval]
    control_variates: NotRequired[ControlVariates]
    rs_penalty: float | None
    rs_penalty_ci: Interval
    learning_win: float
    random_win: float
    learning_penalty: float
    random_penalty: float
    learning_win_ci: Interval
    random_win_ci: Interval
    learning_penalty_ci: Interval
    random_penalty_ci: Interval
    best_win: str
    best_penalty: str
    skill_share: float | None
    skill_share_ci: Interval
    n_star: float | None
    n_star_ci: Interval
    rating_spread: float
    rating_spread_ci: Interval
    upset_rate: float
    upset_rate_ci: Interval
    ppo_checkpoint: str | None
    zoo_policy: str | None
    ladder: list[LadderRow]
    key: NotRequired[str]
    """An atlas cell's ``PRESET-<P>p-<H>c``."""


Progress = Callable[[float, str], None]
"""``progress(units_done, stage)``: work done so far in this variant (see :func:`work`) and what runs now."""


@dataclass(frozen=True)
class VariantJob:
    """Everything a worker needs to run one variant."""

    preset: str
    players: int
    budget: Budget
    seed: int
    train_settings: dict[str, Any]
    """PPO config keys (``training.config.Config``) besides preset, players, steps and seed."""
    checkpoint: str | None = None
    """A trained checkpoint to put on the ladder instead of training one."""
    checkpoint_out: str | None = None
    """Where the trained checkpoint is written (when ``checkpoint`` is None and the budget trains)."""
    hand_size: int | None = None
    """Cards dealt to each player (``None``: the preset's own)."""

    @property
    def rules(self) -> Rules:
        """The variant's rules at the report's player count (and hand size)."""
        sizes = {} if self.hand_size is None else {"hand_size": self.hand_size}
        return Rules.preset(self.preset, players=self.players, **sizes)

    @property
    def trains(self) -> bool:
        """Whether the variant trains its PPO agent (the budget trains and no checkpoint is given)."""
        return self.budget.policy == "train" and self.checkpoint is None

    @property
    def policy_spec(self) -> str:
        """The ladder spec of the learned agent: the PPO checkpoint, or the zoo's policy for the variant's table."""
        if self.budget.policy == "zoo":
            return f"zoo:{self.zoo_policy}"
        return f"ppo:{self.checkpoint or self.checkpoint_out}"

    @property
    def zoo_policy(self) -> str:
        """The shipped policy ``zoo`` plays at every table: the universal network."""
        from agents.zoo import UNIVERSAL  # torch: only a zoo ladder asks

        return UNIVERSAL


def work(job: VariantJob) -> float:
    """Estimated work units of ``job`` (training plus every ladder agent's matches), for progress bars."""
    train = job.budget.train_steps * TRAIN_COST if job.trains else 0.0
    return train + sum(agent_work(job, index) for index in range(len(ladder(job.budget))))


def train_agent(job: VariantJob, progress: Progress) -> None:
    """Train the variant's PPO agent for ``budget.train_steps`` decisions and save it to ``job.checkpoint_out``."""
    from training.config import config_from_dict
    from training.run import train_to_file

    rules = dict(job.train_settings.get("rules") or {})
    if job.hand_size is not None:
        rules["hand_size"] = job.hand_size
    cfg = config_from_dict(
        {
            **job.train_settings,
            "preset": job.preset,
            "rules": rules,
            "players": [job.players],
            "total_steps": job.budget.train_steps,
            "seed": job.seed,
            "time_limit": 0,  # a fixed number of decisions: the same budget on any machine
        }
    )
    train_to_file(cfg, str(job.checkpoint_out), lambda step, logs: progress(step * TRAIN_COST, "training PPO"))


def agent_plan(job: VariantJob, index: int) -> TournamentPlan:
    """Ladder agent ``index`` (focal) against the field on the variant's deals (seeded by the job): a task per table."""
    return spec_plan(job, ladder(job.budget, job.policy_spec)[index])


def spec_plan(job: VariantJob, spec: str) -> TournamentPlan:
    """Agent ``spec`` (focal) against the field on the variant's deals, as every ladder agent plays them."""
    rules, budget = job.rules, job.budget
    return plan_tournament(
        rules, [spec] + [FIELD] * (rules.players - 1), budget.deals, job.seed, resamples=budget.resamples
    )


def play_agent(job: VariantJob, index: int, progress: Progress | None = None) -> TournamentResult:
    """The tournament of ladder agent ``index`` (:func:`agent_plan`), its tables one after another in this process.

    ``progress(units, stage)`` counts this agent's units from 0 (see :func:`work`).
    """
    report = progress or (lambda units, stage: None)
    plan, label = agent_plan(job, index), ladder(job.budget)[index]
    cost = agent_match_cost(job, index)
    tables: list[SeatStats] = []
    for task in plan.tasks:
        done = len(tables) * job.budget.deals
        tables.append(play_planned(lambda n, base=done: report((base + n) * cost, label), *task))
    return plan.result(tables)


def agent_match_cost(job: VariantJob, index: int) -> float:
    """Rough cost of one focal match of ladder agent ``index`` (:func:`skill.budget.match_cost` of its spec)."""
    return match_cost(ladder(job.budget, job.policy_spec)[index])


def agent_work(job: VariantJob, index: int) -> float:
    """Estimated work units of ladder agent ``index``'s tournament (part of :func:`work`)."""
    return job.budget.deals * job.players * agent_match_cost(job, index)


def run_variant(job: VariantJob, progress: Progress | None = None) -> VariantRow:
    """Run one variant in this process; return its ``report.json`` object (without ``rank``)."""
    report = progress or (lambda units, stage: None)
    done = 0.0
    if job.trains:
        train_agent(job, report)
        done = job.budget.train_steps * TRAIN_COST
    results = []
    for index, label in enumerate(ladder(job.budget)):

        def agent_progress(units: float, stage: str, base: float = done) -> None:
            report(base + units, stage)

        results.append(play_agent(job, index, agent_progress))
        done += agent_work(job, index)
        report(done, label)
    row = variant_result(job, results)
    report(done, CV_STAGE)
    fitted, measured = (capture_best(job, row["best_win"], k) for k in range(2))
    report(done, "done")
    data = focal_data(ladder(job.budget), [r.by_seating for r in results])
    return with_control_variates(job, data, row, fitted, measured)


def capture_plans(job: VariantJob, label: str) -> tuple[TournamentPlan, TournamentPlan]:
    """Ladder agent ``label`` against the field on separate deals (to fit the control variates) and on the variant's."""
    spec = dict(zip(ladder(job.budget), ladder(job.budget, job.policy_spec), strict=True))[label]
    rules = job.rules
    entries = [spec] + [FIELD] * (rules.players - 1)
    return plan_tournament(rules, entries, job.budget.deals, job.seed + seeds.CV_FIT, resamples=1), spec_plan(job, spec)


def capture_best(job: VariantJob, label: str, which: int) -> Captured:
    """The chance features of ladder agent ``label``'s matches: ``which`` 0 on the fitting deals, 1 on its own.

    The rounds on other deals are played out by the field in every seat (a stand-in for a
    focal agent that may be a slow search).
    """
    return capture(capture_plans(job, label)[which], job.seed + which, stand_in=True)


def with_control_variates(
    job: VariantJob, data: FocalData, row: VariantRow, fitted: Captured, measured: Captured
) -> VariantRow:
    """``row`` with its win-rate statistics from the best agent's results less each round's deal luck.

    The correction (:mod:`skill.control_variates`) is unbiased: its coefficients are fitted on
    ``fitted`` (other deals) and applied to ``measured`` (the best agent's own matches,
    checked to be). The plain statistics stay as ``KEY_plain``; the bootstrap draws the same
    deals for both, so their intervals are compared on equal terms.
    """
    best = row["best_win"]
    i = data.specs.index(best)
    if not np.allclose(measured.win, data.win[i]):
        raise RuntimeError(f"{job.preset}: the matches captured for the control variates are not {best}'s own")
    win = data.win.copy()
    win[i] = corrected(measured, fit([fitted]))
    budget = job.budget
    stats = skill_stats(
        dataclasses.replace(data, win=win),
        RANDOM,
        FICTIVE,
        FIELD,
        job.seed,
        budget.resamples,
        cheating=CHEATING,
        best=(best, row["best_penalty"]),
    )
    out: dict[str, Any] = dict(row)
    for key in CV_KEYS:
        out[f"{key}_plain"], out[f"{key}_ci_plain"] = out[key], out[f"{key}_ci"]
        out[key], out[f"{key}_ci"] = getattr(stats, key), list(getattr(stats, f"{key}_ci"))
    out["control_variates"] = {
        "agent": best,
        "fit_deals": budget.deals,
        "halfwidth_plain": _halfwidth(row["rs_win_ci"]),
        "halfwidth": _halfwidth(out["rs_win_ci"]),
    }
    return cast(VariantRow, out)


def _halfwidth(ci: Sequence[float | None]) -> float | None:
    """Half an interval's width (``None`` when an end is undefined)."""
    low, high = ci
    return None if low is None or high is None else (high - low) / 2


def variant_result(job: VariantJob, results: Sequence[TournamentResult]) -> VariantRow:
    """The variant's ``report.json`` object (without ``rank``) from its ladder's tournaments, in ladder order."""
    rules, budget = job.rules, job.budget
    labels = ladder(budget)
    data = focal_data(labels, [r.by_seating for r in results])
    stats = skill_stats(data, RANDOM, FICTIVE, FIELD, job.seed, budget.resamples, cheating=CHEATING)
    ladder_rows: list[LadderRow] = []
    for i, (label, result) in enumerate(zip(labels, results, strict=True)):
        focal = result.entries[0]
        ladder_rows.append(
            {
                "spec": label,
                "win_rate": focal.win_rate,
                "win_rate_ci": list(focal.win_rate_ci),
                "mean_penalty": focal.mean_penalty,
                "mean_penalty_ci": list(focal.mean_penalty_ci),
                "rating": float(stats.rating[i]),
                "rating_ci": [float(x) for x in stats.rating_ci[i]],
            }
        )
    return {
        "preset": job.preset,
        "players": rules.players,
        "hand_size": rules.hand_size,
        "rules": rules.to_dict(),
        "rs_win": stats.rs_win,
        "rs_win_ci": list(stats.rs_win_ci),
        "rs_penalty": stats.rs_penalty,
        "rs_penalty_ci": list(stats.rs_penalty_ci),
        "learning_win": stats.learning_win,  # EFFECT_KEYS, then their intervals
        "random_win": stats.random_win,
        "learning_penalty": stats.learning_penalty,
        "random_penalty": stats.random_penalty,
        "learning_win_ci": list(stats.learning_win_ci),
        "random_win_ci": list(stats.random_win_ci),
        "learning_penalty_ci": list(stats.learning_penalty_ci),
        "random_penalty_ci": list(stats.random_penalty_ci),
        "best_win": stats.best_win,
        "best_penalty": stats.best_penalty,
        "skill_share": stats.skill_share,
        "skill_share_ci": list(stats.skill_share_ci),
        "n_star": stats.n_star,
        "n_star_ci": list(stats.n_star_ci),
        "rating_spread": stats.rating_spread,
        "rating_spread_ci": list(stats.rating_spread_ci),
        "upset_rate": stats.upset_rate,
        "upset_rate_ci": list(stats.upset_rate_ci),
        "ppo_checkpoint": None if budget.policy == "zoo" else job.checkpoint or job.checkpoint_out,
        "zoo_policy": job.zoo_policy if budget.policy == "zoo" else None,
        "ladder": ladder_rows,
    }

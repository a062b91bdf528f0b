"""The skill study: which rule variant rewards skill, at research grade (``agurk skill-study``).

A skill report (:mod:`skill.report`) ranks the presets on one set of 400 deals; its RS
intervals are as wide as the gaps between the middle presets. The study answers the same
question so that the answer reproduces:

1. **Selection on separate deals.** The best fair agent of every setting (by win rate and
   by penalty) is taken from a skill report (``selection``: its seed-0 deals) or chosen by
   a selection run of the ``candidates`` on seed 0 (:mod:`skill.study_plan`).
2. **Two replications** of every preset (``seeds``), each on its own deals, each setting on
   the deals its RS needs for the target half-width (:class:`skill.study_plan.Allocation`):
   only random play, the best fair agents and the fictive player play.
3. **Statistics** (:mod:`skill.study_stats`): RS by win rate and by penalty per replication
   and pooled, with 95% bootstrap intervals; Spearman's correlation between the
   replications with its bootstrap interval; a rank interval per preset; tiers from Holm-
   corrected pairwise tests.
4. **Robustness**: the pooled tiers again against another field (``fields``, e.g. three
   ``zoo``s: the fictive player then best-responds to the network, which it can simulate
   since the greedy network is deterministic) and at other table sizes (``players``), on one
   replication each; Kendall's W over the rankings, and the presets whose rank moves most.
5. **Convergence** and **ground truth** from files made elsewhere: a skill report's
   ``convergence.json`` (RS per training budget of the network) and the exact check of tiny
   games (``exact``: :mod:`skill.exact_check`'s JSON), copied in with their provenance.

Everything played is a piece of the piece cache (:mod:`skill.study_play`), so a study
interrupted at any point plays only what is missing when run again, on any machine that has
the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from agents.tasks import LOCAL, Backend, run_tasks
from agurk_env import seeds
from skill import study_stats as st
from skill.stats import inverse
from skill.study_config import StudyConfig
from skill.study_plan import FICTIVE, RANDOM, Choice, agents_of, from_report, replication_jobs
from skill.study_play import Monitor, Piece, PieceCache, PieceJob, Setting, jobs_for, play_pieces

SELECTION_SEED = 0
"""The deal seed of the selection deals (a skill report's seed 0: the deals of the committed report)."""


class SettingRow(TypedDict):
    """One setting's numbers in one replication (or pooled) in ``study.json``."""

    preset: str
    rs_win: float
    rs_win_ci: list[float]
    rs_penalty: float
    rs_penalty_ci: list[float]
    skill_share: float
    skill_share_ci: list[float]
    n_star: float | None
    n_star_ci: list[float | None]
    deals: dict[str, int]
    win_rate: dict[str, float]
    best_win: str
    best_penalty: str


class VariantRow(SettingRow):
    """A preset's pooled result in ``study.json``: with its rank interval, tier and each replication's RS."""

    rank: int
    rank_ci: list[float]
    tier: int
    rank_penalty: int
    tier_penalty: int
    replications: list[SettingRow]


@dataclass
class Measured:
    """RS by win rate and by penalty of every setting of one group, from the same pieces."""

    settings: list[Setting]
    choices: list[Choice]
    win: list[st.RS]
    penalty: list[st.RS]
    share: list[st.RS]
    """The skill share between random play and the best fair agent (N* its inverse)."""

    def rows(self) -> list[SettingRow]:
        """Each setting's row."""
        rows: list[SettingRow] = []
        for s, c, w, p, sh in zip(self.settings, self.choices, self.win, self.penalty, self.share, strict=True):
            low, high = sh.ci
            rows.append(
                {
                    "preset": s.preset,
                    "rs_win": w.value,
                    "rs_win_ci": w.ci,
                    "rs_penalty": p.value,
                    "rs_penalty_ci": p.ci,
                    "skill_share": sh.value,
                    "skill_share_ci": sh.ci,
                    "n_star": inverse(sh.value),
                    "n_star_ci": [inverse(high), inverse(low)],
                    "deals": w.deals,
                    "win_rate": w.results,
                    "best_win": c.best_win,
                    "best_penalty": c.best_penalty,
                }
            )
        return rows

    def samples(self, measure: str = "win") -> np.ndarray:
        """``(B, S)`` bootstrap RS of every setting."""
        return np.stack([r.samples for r in (self.win if measure == "win" else self.penalty)], axis=1)

    def ranking(self, measure: str = "win") -> tuple[list[int], list[int]]:
        """Ranks (1 = most skill) and tiers of the settings by RS."""
        rs = self.win if measure == "win" else self.penalty
        values = [r.value for r in rs]
        return [int(x) for x in st.ranks(np.array(values))], st.tiers(values, [r.se for r in rs])


def measure(
    settings: Sequence[Setting],
    choices: Sequence[Choice],
    pieces: Mapping[tuple[Setting, str], Piece],
    seed: int,
    resamples: int,
) -> Measured:
    """RS of each setting from its agents' ``pieces`` (joined over the chunks and replications given)."""
    win, pen, share = [], [], []
    for i, (s, c) in enumerate(zip(settings, choices, strict=True)):
        mine = {spec: pieces[(s, spec)] for spec in agents_of(c)}
        stream = seed * seeds.SETTING_STRIDE + i
        sums = st.resampled(mine, stream, resamples)  # one bootstrap for RS and the skill share
        w, p = st.relative_skill(mine, c.best_win, c.best_penalty, stream, resamples, sums)
        win.append(w)
        pen.append(p)
        share.append(st.share_of_skill(mine, c.best_win, stream, resamples, sums))
    return Measured(list(settings), list(choices), win, pen, share)


def _choose(pieces: Mapping[str, Piece], candidates: Sequence[str], resamples: int) -> Choice:
    """The best fair agents among ``candidates`` on the selection pieces, and the RS half-width there."""
    win = {c: float(pieces[c].win.mean()) for c in candidates}
    pen = {c: -float(pieces[c].penalty.sum() / pieces[c].rounds.sum()) for c in candidates}
    best_win, best_pen = max(candidates, key=win.__getitem__), max(candidates, key=pen.__getitem__)
    rs, _ = st.relative_skill(pieces, best_win, best_pen, SELECTION_SEED, resamples)
    return Choice(best_win, best_pen, rs.halfwidth, len(pieces[RANDOM].win), "selection")


@dataclass
class Reduction:
    """A preset's RS (win rate) on the same deals, plain and with the best agent's chance control variates."""

    preset: str
    agent: str
    plain: st.RS
    cv: st.RS
    coef: np.ndarray


@dataclass
class Study:
    """A finished study: the options, the choices, the replications, pooled results, robustness and the rest."""

    config: StudyConfig
    choices: dict[Setting, Choice]
    replications: list[Measured]
    pooled: Measured
    robust: dict[str, Measured]
    played: int
    """Pieces played by this run (the rest came from the cache)."""
    variance: list[Reduction] = field(default_factory=list)
    """Per preset measured: the plain and the variance-reduced RS on the same deals."""
    extras: dict[str, Any] = field(default_factory=dict)


def plan(config: StudyConfig) -> tuple[dict[Setting, Choice], list[PieceJob]]:
    """The choices a report gives and the selection pieces still to be chosen from (seed 0, one chunk)."""
    choices: dict[Setting, Choice] = {}
    if config.selection:
        report = json.loads(Path(config.selection).read_text())
        given = from_report(report, config.field, config.selection)
        choices = {s: given[s] for s in config.main_settings() if s in given}
    todo = [s for s in config.main_settings() if s not in choices]
    for group in config.robust_settings().values():
        todo += group
    jobs = [
        PieceJob(s, spec, SELECTION_SEED, config.chunk)
        for s in todo
        for spec in dict.fromkeys([RANDOM, *config.candidates, FICTIVE])
    ]
    return choices, jobs


def run_study(
    config: StudyConfig,
    cache: str | Path,
    workers: int = 1,
    backend: Backend = LOCAL,
    monitor: Callable[[str], Monitor] | None = None,
) -> Study:
    """Run (or resume from ``cache``) the whole study; ``monitor(stage)`` gives each stage's progress callback."""
    store = PieceCache(cache)
    watch: Callable[[str], Monitor | None] = monitor or (lambda stage: None)
    choices, selection = plan(config)
    picked, played = play_pieces(selection, store, workers, backend, watch("selection"))
    by_job = {(j.setting, j.spec): p for j, p in zip(selection, picked, strict=True)}
    for s in dict.fromkeys(j.setting for j in selection):
        mine = {spec: by_job[(s, spec)] for spec in dict.fromkeys([RANDOM, *config.candidates, FICTIVE])}
        choices[s] = _choose(mine, config.candidates, config.resamples)
    allocation = config.allocation()
    main = config.main_settings()
    jobs = [replication_jobs({s: choices[s] for s in main}, seed, allocation) for seed in config.seeds]
    robust_jobs = {
        label: [
            job
            for s in group
            for spec in agents_of(choices[s])
            for job in jobs_for(
                s, spec, config.seeds[0], allocation.agent_deals(spec, config.robust_deals), config.chunk
            )
        ]
        for label, group in config.robust_settings().items()
    }
    everything = [j for js in jobs for j in js] + [j for js in robust_jobs.values() for j in js]
    pieces, more = play_pieces(everything, store, workers, backend, watch("replications"))
    found = dict(zip(everything, pieces, strict=True))

    def joined(job_list: Sequence[PieceJob]) -> dict[tuple[Setting, str], Piece]:
        groups: dict[tuple[Setting, str], list[Piece]] = {}
        for j in job_list:
            groups.setdefault((j.setting, j.spec), []).append(found[j])
        return {k: Piece.join(v) for k, v in groups.items()}

    main_choices = [choices[s] for s in main]
    reps = [
        measure(main, main_choices, joined(js), seed, config.resamples)
        for seed, js in zip(config.seeds, jobs, strict=True)
    ]
    pooled = measure(main, main_choices, joined([j for js in jobs for j in js]), 0, config.resamples)
    robust = {
        label: measure(
            group, [choices[s] for s in group], joined(robust_jobs[label]), config.seeds[0], config.resamples
        )
        for label, group in config.robust_settings().items()
    }
    variance = _variance_reduction(config, choices, found, store, workers, backend, watch("variance reduction"))
    study = Study(config, choices, reps, pooled, robust, played + more, variance)
    study.extras = _extras(config)
    if config.cv_deals and config.cv_check:
        study.extras["cv_check"] = _cv_check(config.cv_check)
    return study


def _extras(config: StudyConfig) -> dict[str, Any]:
    """The convergence and exact-check files the study includes, read as they are."""
    out: dict[str, Any] = {}
    if config.convergence:
        out["convergence"] = json.loads(Path(config.convergence).read_text())
    if config.exact:
        out["exact"] = json.loads(Path(config.exact).read_text())
    return out


def _variance_reduction(
    config: StudyConfig,
    choices: Mapping[Setting, Choice],
    found: Mapping[PieceJob, Piece],
    store: PieceCache,
    workers: int,
    backend: Backend,
    monitor: Monitor | None,
) -> list[Reduction]:
    """The plain and the control-variate RS (win rate) on the first ``cv_deals`` deals of the first replication.

    Per main setting whose best agent is not capped (the others cost too much to play out
    every round again): the best agent's chance features captured on ``cv_fit_deals`` selection
    deals (the coefficients) and on the measured deals (checked to be the pieces' own matches).
    """
    from skill.control_variates import Captured, capture_task, corrected, cv_settings, fit

    if not config.cv_deals:
        return []
    allocation = config.allocation()
    chunks = {s: c for s, c in choices.items() if s in set(config.main_settings())}
    eligible = [s for s, c in chunks.items() if allocation.agent_deals(c.best_win, 10**9) == 10**9]
    jobs: list[tuple[Setting, str, PieceJob]] = []
    for s in eligible:
        spec = choices[s].best_win
        fit_deals = max(1, config.cv_fit_deals // config.chunk) * config.chunk
        jobs += [(s, "fit", j) for j in jobs_for(s, spec, SELECTION_SEED, fit_deals, config.chunk)]
        deals = max(1, min(config.cv_deals, allocation.deals(choices[s])) // config.chunk) * config.chunk
        jobs += [(s, "eval", j) for j in jobs_for(s, spec, config.seeds[0], deals, config.chunk)]
    paths = [store.folder / "cv" / store.path(j).relative_to(store.folder) for *_, j in jobs]
    materials = [store.material(j, j.plan()) + f" cv{cv_settings()}" for *_, j in jobs]
    got = [store.load_arrays(p, m) for p, m in zip(paths, materials, strict=True)]
    todo = [i for i, g in enumerate(got) if g is None]
    report = monitor or (lambda done, total, name: None)
    done = len(jobs) - len(todo)
    report(done, len(jobs), "")

    def finished(index: int, captured: Any) -> None:
        nonlocal done
        i = todo[index]
        arrays = {"win": captured.win, "features": captured.features}
        got[i] = arrays
        store.store_arrays(paths[i], materials[i], arrays)
        done += 1
        report(done, len(jobs), jobs[i][2].name)

    run_tasks(
        capture_task,
        [(jobs[i][2].plan(), jobs[i][2].seed) for i in todo],
        workers,
        backend,
        names=[f"capture {jobs[i][2].name}" for i in todo],
        on_result=finished,
        every=1.0,
    )
    stored: list[dict[str, np.ndarray]] = []
    for g in got:
        assert g is not None  # every job's arrays loaded or captured above
        stored.append(g)
    out = []
    for n, s in enumerate(eligible):
        mine = [(kind, j, g) for (t, kind, j), g in zip(jobs, stored, strict=True) if t == s]
        fitted = [Captured(g["win"], g["features"]) for kind, _, g in mine if kind == "fit"]
        measured = [(j, Captured(g["win"], g["features"])) for kind, j, g in mine if kind == "eval"]
        coef = fit(fitted)
        c = choices[s]
        pieces = {
            spec: Piece.join([found[PieceJob(s, spec, j.seed, j.deals)] for j, _ in measured])
            for spec in (RANDOM, FICTIVE, c.best_win)
        }
        win = np.concatenate([m.win for _, m in measured])
        if not np.allclose(win, pieces[c.best_win].win):
            raise RuntimeError(f"{s.key}: the captured matches of {c.best_win} are not the pieces' own")
        plain, _ = st.relative_skill(pieces, c.best_win, c.best_win, 5000 + n, config.resamples)
        best = pieces[c.best_win]
        pieces[c.best_win] = Piece(np.concatenate([corrected(m, coef) for _, m in measured]), best.penalty, best.rounds)
        cv, _ = st.relative_skill(pieces, c.best_win, c.best_win, 5000 + n, config.resamples)
        out.append(Reduction(s.preset, c.best_win, plain, cv, coef))
    return out


def _cv_check(deals: int) -> dict[str, Any]:
    """The control variates' unbiasedness check where the truth is known: ``zoo`` in a tiny every-trick game."""
    from agurk_env import engine
    from skill.control_variates import unbiased_check
    from skill.exact_check import exact_results
    from skill.exploitability import Setting as Tiny

    tiny = Tiny("every_trick", 2, 2, "10,J,Q,K,A", 2)
    rules = tiny.rules()
    exact = exact_results(tiny, "zoo")["win"]
    deck = engine.deck_counts(rules, tiny.ranks, tiny.copies)
    check = unbiased_check(rules, deck, "zoo", "guard", exact, deals, max(1000, deals // 5), 11)
    return {"setting": "every_trick 2 players x 2 cards, deck 10 J Q K A x2 (about 1.5 rounds a match)", **check}

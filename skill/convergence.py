"""Convergence evidence for a skill report: relative skill at earlier training budgets of its network.

``--convergence PATH,...`` names earlier checkpoints of the network the report plays as its
learned agent (the same network in every variant: ``--policy zoo``, or one ``--checkpoint``),
in training order; the report's own network is the last budget. Each checkpoint plays, as
``ppo:PATH``, the same deals of every variant against the same field as the ladder
(:func:`skill.variant.spec_plan`); the rest of the ladder is played once. Per variant and
budget, :func:`budget_rs` takes the ladder with that budget's network in the learned agent's
place and computes RS by :func:`skill.stats.skill_stats`, so the best real agent is that
network or a search, whichever is stronger there, exactly as the report chooses it; the last
budget's numbers are the report's own (:func:`last_rs`).

The stability of the ranking between two budgets (:func:`stability`): Spearman's rank
correlation of the variants' RS by win rate, with a 95% bootstrap interval over deals (each
resample picks the same deals, :func:`agents.tournament_stats.deal_resamples` with the
report's seed, for every variant and both budgets; RS is recomputed per variant with its
best agent fixed, then the correlation), and the variants whose rank moves. The ranking is
called stable when the interval's lower end reaches :data:`THRESHOLD` and no variant moves.

:func:`write_files` writes ``convergence.md``, ``convergence.json``, ``convergence.csv`` and
``convergence.png`` (RS against training decisions, one line per variant).
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from agents.tournament import TournamentPlan, TournamentResult
from agents.tournament_stats import SeatStats, deal_resamples
from agurk_env.atomic import atomic_text, atomic_write_text
from skill.budget import CHEATING, FICTIVE, FIELD, POLICY_LABEL, RANDOM, Budget, ladder
from skill.plots import error_bars, pyplot, save
from skill.report_text import reproduce
from skill.stats import FocalData, _interval, _relative_skill, focal_data, skill_stats
from skill.variant import Interval, VariantJob, VariantRow

FORMAT = "agurk-convergence"
"""The ``format`` of ``convergence.json``."""
THRESHOLD = 0.9
"""The ranking is stable when the lower end of the rank correlation's 95% interval reaches this, and no variant
moves rank between the last two budgets."""
NETWORK = "network"
"""The learned agent's name in the convergence files (the ladder's ``zoo`` or ``ppo``)."""


class BudgetCheckpoint(TypedDict):
    """One training budget: the network's file and the decisions it was trained for."""

    checkpoint: str
    decisions: int


class BudgetRS(TypedDict):
    """A variant's relative skill at one budget (the network of that budget on the ladder), with 95% intervals."""

    decisions: int
    rs_win: float | None
    rs_win_ci: Interval
    rs_penalty: float | None
    rs_penalty_ci: Interval
    best_win: str
    best_penalty: str
    network_win_rate: float
    """The network's own focal win rate against the field."""


class RankChange(TypedDict):
    """A variant whose rank by RS (win rate) differs between two budgets."""

    name: str
    rank_before: int
    rank_after: int


class Stability(TypedDict):
    """How the variants' ranking by RS (win rate) changes from one budget to the next."""

    decisions_before: int
    decisions_after: int
    spearman: float | None
    spearman_ci: Interval
    moves: list[RankChange]
    stable: bool


def learned_index(budget: Budget) -> int:
    """The learned agent's place on the ladder."""
    return ladder(budget).index(POLICY_LABEL[budget.policy])


def learned_file(job: VariantJob) -> Path | None:
    """The checkpoint file the variant's learned agent plays (``None``: one trained by the report)."""
    if job.budget.policy == "zoo":
        from agents.zoo import path_of

        return path_of(job.zoo_policy)
    if job.checkpoint is None:
        return None
    path = Path(job.checkpoint)
    if path.is_dir():
        best = path / "checkpoints" / "best.pt"
        return best if best.exists() else path / "checkpoints" / "latest.pt"
    return path


def decisions_of(path: str | Path) -> int:
    """The decisions a checkpoint was trained for (its ``global_step``); :class:`CheckpointError` if unreadable."""
    from agents.policy import load_checkpoint

    return int(load_checkpoint(path).get("global_step", 0))


def checkpoints(jobs: Sequence[VariantJob], earlier: Sequence[str]) -> list[BudgetCheckpoint]:
    """The budgets: each of ``earlier`` (training order), then the network every job plays, with their decisions.

    ``ValueError`` (one line) when the jobs do not all play one network that the report does
    not train, or when the decisions do not grow from one budget to the next.
    """
    files = {learned_file(job) for job in jobs}
    if None in files or len(files) != 1:
        raise ValueError(
            "--convergence needs one network in every variant, not trained by the report: --policy zoo, "
            "or --checkpoint PATH"
        )
    (last,) = files
    assert last is not None
    return in_order([*earlier, last])


def in_order(paths: Sequence[str | Path]) -> list[BudgetCheckpoint]:
    """The budgets of ``paths`` (the report's network last) with their decisions; ``ValueError`` unless they grow.

    :class:`agents.policy.CheckpointError` (a ``ValueError``) names a file that is not a checkpoint.
    """
    budgets = [BudgetCheckpoint(checkpoint=str(p), decisions=decisions_of(p)) for p in paths]
    steps = [b["decisions"] for b in budgets]
    if any(a >= b for a, b in itertools.pairwise(steps)):
        listed = ", ".join(f"{Path(b['checkpoint']).name} {b['decisions']:,}" for b in budgets)
        raise ValueError(
            "the checkpoints must be in training order, each trained for fewer decisions than the next and than "
            f"the report's network (the last): {listed}"
        )
    return budgets


def seated(plan: TournamentPlan, tables: Sequence[SeatStats]) -> list[SeatStats]:
    """A tournament's numbers per seating counted, by entry (:attr:`TournamentResult.by_seating`, unsummarized)."""
    return [tables[t].by_entry(seat) for t, seat in plan.design.views]


def _data(job: VariantJob, by_seating: Sequence[Sequence[SeatStats]], network: Sequence[SeatStats] | None) -> FocalData:
    """The ladder's focal data, the learned agent's seatings replaced by ``network``'s (``None``: as played)."""
    by_seating = list(by_seating)
    if network is not None:
        by_seating[learned_index(job.budget)] = network
    return focal_data(ladder(job.budget), by_seating)


def rs_win_samples(job: VariantJob, data: FocalData, best: str) -> np.ndarray:
    """RS by win rate on each of the report's bootstrap resamples of the deals, ``best`` fixed (NaN: undefined)."""
    specs = data.specs
    k, n = data.win.shape
    chunk = max(1, 2_000_000 // max(n * k, 1))  # skill_stats's chunks: the same resamples
    return np.concatenate(
        [
            _relative_skill(counts @ data.win.T / n, specs.index(best), specs.index(RANDOM), specs.index(FICTIVE))
            for counts in deal_resamples(job.seed, n, job.budget.resamples, chunk=chunk)
        ]
    )


def _name(job: VariantJob, spec: str) -> str:
    """A ladder label as the convergence files name it: the learned agent is the network."""
    return NETWORK if spec == POLICY_LABEL[job.budget.policy] else spec


def budget_rs(
    job: VariantJob, by_seating: Sequence[Sequence[SeatStats]], network: Sequence[SeatStats]
) -> tuple[BudgetRS, np.ndarray]:
    """RS at an earlier budget: the ladder's seatings (:func:`seated`) with ``network``'s as the learned agent's.

    Returns the numbers (``decisions`` 0: the caller knows them) and RS by win rate per resample.
    """
    data = _data(job, by_seating, network)
    stats = skill_stats(data, RANDOM, FICTIVE, FIELD, job.seed, job.budget.resamples, cheating=CHEATING)
    rs: BudgetRS = {
        "decisions": 0,
        "rs_win": stats.rs_win,
        "rs_win_ci": list(stats.rs_win_ci),
        "rs_penalty": stats.rs_penalty,
        "rs_penalty_ci": list(stats.rs_penalty_ci),
        "best_win": _name(job, stats.best_win),
        "best_penalty": _name(job, stats.best_penalty),
        "network_win_rate": float(stats.win_rate[learned_index(job.budget)]),
    }
    return rs, rs_win_samples(job, data, stats.best_win)


def last_rs(job: VariantJob, results: Sequence[TournamentResult], row: VariantRow) -> tuple[BudgetRS, np.ndarray]:
    """RS at the last budget, the report's network: the report's own numbers (``row``), and RS per resample."""
    rs: BudgetRS = {
        "decisions": 0,
        "rs_win": row["rs_win"],
        "rs_win_ci": list(row["rs_win_ci"]),
        "rs_penalty": row["rs_penalty"],
        "rs_penalty_ci": list(row["rs_penalty_ci"]),
        "best_win": _name(job, row["best_win"]),
        "best_penalty": _name(job, row["best_penalty"]),
        "network_win_rate": results[learned_index(job.budget)].entries[0].win_rate,
    }
    return rs, rs_win_samples(job, _data(job, [r.by_seating for r in results], None), row["best_win"])


# ----------------------------------------------------------------------------- the ranking's stability


def ranks(values: Sequence[float | None]) -> list[int]:
    """Ranks by value, highest first (undefined last), ties in the given order: the report's ranking."""

    def key(i: int) -> float:
        value = values[i]
        return -value if value is not None else np.inf

    order = sorted(range(len(values)), key=key)
    out = [0] * len(values)
    for r, i in enumerate(order):
        out[i] = r + 1
    return out


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks of each row's values (1 = lowest), ties sharing their average rank."""
    order = np.argsort(x, axis=-1, kind="stable")
    ranked = np.empty_like(x, dtype=float)
    rows = np.arange(x.shape[0])[:, None]
    ranked[rows, order] = np.arange(1, x.shape[1] + 1, dtype=float)
    for r in range(x.shape[0]):  # average over ties (rare: RS values are ratios of counts)
        values, inverse, counts = np.unique(x[r], return_inverse=True, return_counts=True)
        if len(values) < x.shape[1]:
            sums = np.bincount(inverse, ranked[r])
            ranked[r] = (sums / counts)[inverse]
    return ranked


def spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rank correlation of each row of ``a`` ``(R, V)`` with the same row of ``b``, per row.

    Over the variants where both are defined (NaN where fewer than 2 are, or one side's ranks are all tied).
    """
    out = np.full(a.shape[0], np.nan)
    ok = np.isfinite(a) & np.isfinite(b)
    for mask in {tuple(m) for m in ok}:  # resamples with the same variants defined, together
        keep = np.array(mask, dtype=bool)
        rows = np.flatnonzero((ok == keep).all(1))
        if keep.sum() < 2:
            continue
        ra, rb = _average_ranks(a[rows][:, keep]), _average_ranks(b[rows][:, keep])
        ra -= ra.mean(1, keepdims=True)
        rb -= rb.mean(1, keepdims=True)
        denominator = np.sqrt((ra**2).sum(1) * (rb**2).sum(1))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[rows] = np.where(denominator > 0, (ra * rb).sum(1) / denominator, np.nan)
    return out


def stability(
    names: Sequence[str],
    before: Sequence[BudgetRS],
    after: Sequence[BudgetRS],
    samples_before: np.ndarray,
    samples_after: np.ndarray,
) -> Stability:
    """The ranking's change from ``before`` to ``after`` (per variant, in ``names`` order); samples ``(V, R)``."""
    point = spearman(
        np.array([[np.nan if r["rs_win"] is None else r["rs_win"] for r in before]]),
        np.array([[np.nan if r["rs_win"] is None else r["rs_win"] for r in after]]),
    )[0]
    boot = spearman(samples_before.T, samples_after.T)
    low, high = _interval(boot)
    old, new = ranks([r["rs_win"] for r in before]), ranks([r["rs_win"] for r in after])
    moves = [RankChange(name=n, rank_before=o, rank_after=w) for n, o, w in zip(names, old, new, strict=True) if o != w]
    return {
        "decisions_before": before[0]["decisions"],
        "decisions_after": after[0]["decisions"],
        "spearman": float(point) if np.isfinite(point) else None,
        "spearman_ci": [low, high],
        "moves": moves,
        "stable": len(names) > 1 and low is not None and low >= THRESHOLD and not moves,
    }


# ----------------------------------------------------------------------------- the result and its files


class Row(TypedDict):
    """One variant (or atlas cell) of ``convergence.json``: its RS at every budget, in training order."""

    name: str
    preset: str
    players: int
    hand_size: int
    budgets: list[BudgetRS]


class Convergence(TypedDict):
    """The ``convergence.json`` object."""

    format: str
    seed: int
    budget: str
    deals: int
    bootstrap_resamples: int
    field: str
    threshold: float
    checkpoints: list[BudgetCheckpoint]
    variants: list[Row]
    steps: list[Stability]
    """Per pair of consecutive budgets, the ranking's stability; the last pair gives the verdict."""
    stable: bool
    verdict: str
    command: str


def convergence(
    plan: Budget,
    seed: int,
    budgets: Sequence[BudgetCheckpoint],
    cells: Sequence[tuple[str, int, int]],
    names: Sequence[str],
    per_variant: Sequence[Sequence[tuple[BudgetRS, np.ndarray]]],
    command: str,
) -> Convergence:
    """The ``convergence.json`` object from each variant's RS per budget (``per_variant``, budgets in order).

    ``cells`` are the variants (or atlas cells) as ``(preset, players, hand size)``, ``names``
    their names, both in the order of ``per_variant``.
    """
    table: list[Row] = []
    for (preset, players, hand_size), name, found in zip(cells, names, per_variant, strict=True):
        numbers = [BudgetRS(**{**rs, "decisions": b["decisions"]}) for (rs, _), b in zip(found, budgets, strict=True)]
        table.append(Row(name=name, preset=preset, players=players, hand_size=hand_size, budgets=numbers))
    steps = [
        stability(
            names,
            [r["budgets"][b] for r in table],
            [r["budgets"][b + 1] for r in table],
            np.stack([found[b][1] for found in per_variant]),
            np.stack([found[b + 1][1] for found in per_variant]),
        )
        for b in range(len(budgets) - 1)
    ]
    stable = bool(steps) and steps[-1]["stable"]
    data: Convergence = {
        "format": FORMAT,
        "seed": seed,
        "budget": plan.name,
        "deals": plan.deals,
        "bootstrap_resamples": plan.resamples,
        "field": FIELD,
        "threshold": THRESHOLD,
        "checkpoints": list(budgets),
        "variants": table,
        "steps": steps,
        "stable": stable,
        "verdict": "",
        "command": command,
    }
    data["verdict"] = verdict(data)
    return data


def _millions(decisions: int) -> str:
    """``12.7M`` decisions (thousands below a million)."""
    return f"{decisions / 1e6:.1f}M" if decisions >= 1_000_000 else f"{decisions / 1e3:.0f}k"


def _ci(interval: Sequence[float | None], digits: int = 2) -> str:
    """``[low, high]`` (n/a for an undefined end)."""
    return "[" + ", ".join("n/a" if x is None else f"{x:.{digits}f}" for x in interval) + "]"


def verdict(data: Convergence) -> str:
    """One line: whether the ranking by RS (win rate) is stable between the last two budgets, with the numbers."""
    if len(data["variants"]) < 2:
        return "One variant only: there is no ranking to test."
    if not data["steps"]:
        return "One budget only: give earlier checkpoints (--convergence) to test the ranking's stability."
    last = data["steps"][-1]
    span = f"from {_millions(last['decisions_before'])} to {_millions(last['decisions_after'])} decisions"
    rho = "undefined" if last["spearman"] is None else f"{last['spearman']:.2f}"
    numbers = f"Spearman's rank correlation of RS (win rate) {span} is {rho} {_ci(last['spearman_ci'])}"
    moved = len(last["moves"])
    if last["stable"]:
        return f"The ranking is stable: {numbers} (lower end at least {THRESHOLD}) and no variant changes rank."
    why = []
    low = last["spearman_ci"][0]
    if low is None or low < THRESHOLD:
        why.append(f"its lower end is below {THRESHOLD}")
    if moved:
        why.append(f"{moved} of {len(data['variants'])} variants change rank")
    return f"The ranking is not yet stable: {numbers}; {' and '.join(why)}. Do not rank the variants on it yet."


def write_files(data: Convergence, out: Path) -> None:
    """``convergence.json``, ``convergence.csv``, ``convergence.png`` and ``convergence.md`` into ``out``."""
    atomic_write_text(out / "convergence.json", json.dumps(data, indent=2) + "\n")
    with atomic_text(out / "convergence.csv") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            [
                "name",
                "preset",
                "players",
                "hand_size",
                "decisions",
                "checkpoint",
                "rank",
                *(f"{k}{s}" for k in ("rs_win", "rs_penalty") for s in ("", "_low", "_high")),
                "best_win",
                "best_penalty",
                "network_win_rate",
            ]
        )
        for b, checkpoint in enumerate(data["checkpoints"]):
            order = ranks([v["budgets"][b]["rs_win"] for v in data["variants"]])
            for v, rank in zip(data["variants"], order, strict=True):
                rs = v["budgets"][b]
                numbers = [
                    "" if x is None else f"{x:.6g}"
                    for k in ("rs_win", "rs_penalty")
                    for x in (rs[k], *rs[f"{k}_ci"])  # type: ignore[literal-required]
                ]
                w.writerow(
                    [
                        v["name"],
                        v["preset"],
                        v["players"],
                        v["hand_size"],
                        rs["decisions"],
                        checkpoint["checkpoint"],
                        rank,
                        *numbers,
                        rs["best_win"],
                        rs["best_penalty"],
                        f"{rs['network_win_rate']:.6g}",
                    ]
                )
    plot_convergence(data, out / "convergence.png")
    atomic_write_text(out / "convergence.md", markdown(data))


def _rs_text(value: float | None, interval: Sequence[float | None]) -> str:
    """``value [low, high]`` of an RS (n/a: undefined)."""
    return f"{'n/a' if value is None else f'{value:.2f}'} {_ci(interval)}"


def _rs_table(title: str, measure: str, variants: Sequence[Row], heads: list[str]) -> list[str]:
    """The markdown table of RS by ``measure`` (``win`` or ``penalty``) per variant and budget, and the last best."""
    return [
        f"## RS by {title}",
        "",
        "| variant | " + " | ".join(heads) + " | best real agent (last) |",
        "|---|" + "---|" * len(heads) + "---|",
        *(_rs_row(v["name"], v["budgets"], measure) for v in variants),
    ]


def _rs_row(name: str, budgets: Sequence[Mapping[str, Any]], measure: str) -> str:
    """A variant's row of :func:`_rs_table`: its budgets read by ``measure``'s keys."""
    return (
        f"| {name} | "
        + " | ".join(_rs_text(b[f"rs_{measure}"], b[f"rs_{measure}_ci"]) for b in budgets)
        + f" | {budgets[-1][f'best_{measure}']} |"
    )


def markdown(data: Convergence) -> str:
    """``convergence.md``: the budgets, RS per variant and budget, the ranking's stability, the verdict, the plot."""
    budgets = data["checkpoints"]
    heads = [_millions(b["decisions"]) for b in budgets]
    variants = data["variants"]
    if data["stable"]:  # ranked by the last budget; otherwise in the report's grid order: no ranking
        order = ranks([v["budgets"][-1]["rs_win"] for v in variants])
        variants = [v for _, v in sorted(zip(order, variants, strict=True), key=lambda x: x[0])]
    lines = [
        f"# Convergence of the variant ranking ({data['budget']} budget, seed {data['seed']})",
        "",
        f"**{data['verdict']}**",
        "",
        f"The report's network at {len(budgets)} training budgets, the last the report's own: each played as the "
        f"ladder's learned agent on the same {data['deals']} duplicate deals of every variant against the same field "
        f"(`{data['field']}`), the rest of the ladder played once. RS takes the best real agent of the ladder with "
        "that budget's network in place of the learned agent (the network or a search, whichever is stronger). "
        f"Intervals: 95% bootstrap over deals ({data['bootstrap_resamples']} resamples).",
        "",
        "| budget | decisions | checkpoint |",
        "|---:|---:|---|",
        *(f"| {i + 1} | {b['decisions']:,} | `{b['checkpoint']}` |" for i, b in enumerate(budgets)),
        "",
        *_rs_table("win rate", "win", variants, heads),
        "",
        *_rs_table("penalty", "penalty", variants, heads),
        "",
        "## Stability of the ranking",
        "",
        "Spearman's rank correlation of the variants' RS (win rate) between consecutive budgets, with a 95% "
        "bootstrap interval (each resample picks the same deals for every variant and both budgets, recomputes RS "
        "with each budget's best agent fixed, then the correlation). The ranking counts as stable when the "
        f"interval's lower end reaches {THRESHOLD} and no variant changes rank between the last two budgets.",
        "",
        "| from | to | Spearman | variants that change rank |",
        "|---:|---:|---|---:|",
    ]
    for s in data["steps"]:
        rho = "n/a" if s["spearman"] is None else f"{s['spearman']:.2f}"
        lines.append(
            f"| {_millions(s['decisions_before'])} | {_millions(s['decisions_after'])} | {rho} "
            f"{_ci(s['spearman_ci'])} | {len(s['moves'])} |"
        )
    if data["steps"] and data["steps"][-1]["moves"]:
        last = data["steps"][-1]
        lines += [
            "",
            f"Rank changes from {_millions(last['decisions_before'])} to {_millions(last['decisions_after'])} "
            "decisions:",
            "",
            "| variant | rank before | rank after |",
            "|---|---:|---:|",
            *(f"| {m['name']} | {m['rank_before']} | {m['rank_after']} |" for m in last["moves"]),
        ]
    lines += [
        "",
        "![RS against training decisions](convergence.png)",
        "",
        *reproduce(data["command"], data["seed"], "result"),
    ]
    return "\n".join(lines)


def plot_convergence(data: Convergence, path: Path) -> None:
    """``convergence.png``: RS (win rate and penalty) against training decisions, one line per variant, 95% intervals.

    The x axis is logarithmic; each variant's points are set a little apart so the error bars do not hide each other.
    """
    plt = pyplot()
    variants = data["variants"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    colours = plt.get_cmap("tab20" if len(variants) > 10 else "tab10")
    spread = np.linspace(-1, 1, len(variants)) * 0.03 if len(variants) > 1 else np.zeros(1)
    for ax, key, title in ((axes[0], "rs_win", "RS by win rate"), (axes[1], "rs_penalty", "RS by penalty per round")):
        for j, v in enumerate(variants):
            budgets: Sequence[Mapping[str, Any]] = v["budgets"]  # read by the statistic's key
            steps = np.maximum([b["decisions"] for b in budgets], 1).astype(float) * 10 ** spread[j]
            values, err = error_bars([b[key] for b in budgets], [b[f"{key}_ci"] for b in budgets], cap=1.0)
            ax.errorbar(
                steps, values, yerr=err, fmt="o-", ms=3, capsize=2, color=colours(j % colours.N), label=v["name"]
            )
        ax.axhline(1, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("training decisions of the network")
        ax.set_title(title, fontsize="medium")
    axes[0].set_ylabel("relative skill: 0 = random, 1 = the fictive player")
    axes[1].legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(
        f"Relative skill against training budget ({data['deals']} deals, {data['budget']} budget, seed {data['seed']})",
        fontsize="medium",
    )
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)

"""A skill study's files: ``study.json``, ``report.md`` and the plots (tiers, convergence, robustness).

``study.json`` (``format`` ``agurk-skill-study``) holds, besides the options and the command:

- ``replication``: ``{"seeds", "spearman", "spearman_ci", "halfwidth": {seed: {"median", "max"}}}``;
- ``variants``: per preset (pooled over both replications, ranked by RS by win rate):
  ``rank``, ``rank_ci``, ``tier``, ``rs_win`` / ``rs_win_ci``, ``rs_penalty`` / ``rs_penalty_ci``,
  ``rank_penalty``, ``tier_penalty``, the deals and win rates per agent, the best agents, and
  ``replications`` (each replication's row);
- ``variance_reduction``: the median RS half-width of the plain estimator and of a variance-
  reduced one on the same deals (``null`` when none is used), and what was used;
- ``robustness``: ``{"fields": {SPEC: ...}, "players": {N: ...}, "kendall_w", "measures",
  "disagree"}``: per other setting the presets' RS, rank and tier, then the agreement of
  every ranking (the main win and penalty rankings, each robustness ranking);
- ``convergence`` and ``exact_check``: what the included files say (see :mod:`skill.study`).

:func:`skill_study` is ``agurk skill-study``'s work: the study run (or resumed) and written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.command import worker_count
from agurk_env.atomic import atomic_file
from skill import study_stats as st
from skill.study import Measured, Study, VariantRow, run_study
from skill.study_config import SkillStudyOptions, checked_config, claim_study, study_command
from skill.study_play import Monitor

FORMAT = "agurk-skill-study"


def _halfwidths(m: Measured) -> dict[str, float]:
    """Median and max RS (win rate) half-width over the settings."""
    hw = [r.halfwidth for r in m.win]
    return {"median": float(np.median(hw)), "max": float(np.max(hw))}


def _group(m: Measured) -> dict[str, Any]:
    """A robustness group: each preset's RS (both measures), rank and tier."""
    ranks, tiers = m.ranking()
    return {
        "halfwidth": _halfwidths(m),
        "variants": [{**row, "rank": r, "tier": t} for row, r, t in zip(m.rows(), ranks, tiers, strict=True)],
    }


def variants(study: Study) -> list[VariantRow]:
    """The pooled rows, ranked by RS (win rate), with rank intervals, tiers and each replication's row."""
    pooled = study.pooled
    ranks, tiers = pooled.ranking()
    ranks_p, tiers_p = pooled.ranking("penalty")
    intervals = st.rank_intervals(pooled.samples())
    per_rep = [m.rows() for m in study.replications]
    rows: list[VariantRow] = []
    for i, row in enumerate(pooled.rows()):
        rows.append(
            {
                **row,
                "rank": ranks[i],
                "rank_ci": intervals[i],
                "tier": tiers[i],
                "rank_penalty": ranks_p[i],
                "tier_penalty": tiers_p[i],
                "replications": [rep[i] for rep in per_rep],
            }
        )
    return sorted(rows, key=lambda r: r["rank"])


def agreement(study: Study) -> dict[str, Any]:
    """Kendall's W over every ranking of the presets, and the presets whose rank spreads most between them."""
    names = [s.preset for s in study.pooled.settings]
    rankings = {"main (win rate)": study.pooled.ranking()[0], "main (penalty)": study.pooled.ranking("penalty")[0]}
    for label, m in study.robust.items():
        rankings[f"{label} (win rate)"] = m.ranking()[0]
    table = np.array(list(rankings.values()), dtype=float)
    spread = table.max(0) - table.min(0)
    limit = max(3.0, float(np.percentile(spread, 75)))
    disagree = [
        {"preset": names[j], "ranks": {k: int(v[j]) for k, v in rankings.items()}}
        for j in np.argsort(-spread)
        if spread[j] >= limit
    ]
    return {"kendall_w": st.kendall_w(table), "measures": list(rankings), "disagree": disagree}


def study_json(study: Study, command: str) -> dict[str, Any]:
    """Everything ``study.json`` holds (see the module docstring)."""
    a, b = study.replications
    rs_a, rs_b = [r.value for r in a.win], [r.value for r in b.win]
    robust: dict[str, Any] = {"fields": {}, "players": {}}
    for label, m in study.robust.items():
        kind, _, value = label.partition("=")
        robust["fields" if kind == "field" else "players"][value] = _group(m)
    robust |= agreement(study)
    cfg = study.config
    return {
        "format": FORMAT,
        "command": command,
        "config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
        "selection": {
            s.key: {
                "best_win": c.best_win,
                "best_penalty": c.best_penalty,
                "halfwidth": c.halfwidth,
                "deals": c.deals,
                "source": c.source,
            }
            for s, c in study.choices.items()
        },
        "replication": {
            "seeds": list(cfg.seeds),
            "spearman": st.spearman(rs_a, rs_b),
            "spearman_ci": st.spearman_interval(a.samples(), b.samples()),
            "spearman_penalty": st.spearman([r.value for r in a.penalty], [r.value for r in b.penalty]),
            "spearman_penalty_ci": st.spearman_interval(a.samples("penalty"), b.samples("penalty")),
            "halfwidth": {str(seed): _halfwidths(m) for seed, m in zip(cfg.seeds, study.replications, strict=True)},
            "halfwidth_pooled": _halfwidths(study.pooled),
        },
        "variants": variants(study),
        "variance_reduction": _variance(study),
        "robustness": robust,
        "convergence": _convergence(study.extras.get("convergence")),
        "exact_check": study.extras.get("exact", []),
    }


def _variance(study: Study) -> dict[str, Any]:
    """The plain and the control-variate RS (win rate) half-widths on the same deals, per preset and their medians."""
    rows = [
        {
            "preset": r.preset,
            "agent": r.agent,
            "deals": r.plain.deals[r.agent],
            "rs_win_plain": r.plain.value,
            "rs_win_ci_plain": r.plain.ci,
            "rs_win_cv": r.cv.value,
            "rs_win_ci_cv": r.cv.ci,
            "narrowing": r.plain.halfwidth / r.cv.halfwidth,
        }
        for r in study.variance
    ]
    median = lambda key: float(np.median([x[key] for x in rows])) if rows else None  # noqa: E731
    return {
        "estimator": "Chance control variates (AIVAT-style, skill.control_variates) on the best fair agent's results",
        "halfwidth_plain": float(np.median([r.plain.halfwidth for r in study.variance])) if rows else None,
        "halfwidth_cv": float(np.median([r.cv.halfwidth for r in study.variance])) if rows else None,
        "narrowing_median": median("narrowing"),
        "presets": rows,
        "unbiased_check": study.extras.get("cv_check"),
    }


def _convergence(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """RS (win rate) per training budget per preset from a report's convergence.json; the presets still moving.

    A preset is still moving when its RS at the last budget lies outside the 95% interval of
    its RS at the budget closest to half the last one's decisions (the last doubling).
    """
    if not data:
        return None
    decisions = [c["decisions"] for c in data["checkpoints"]]
    half = int(np.argmin([abs(d - decisions[-1] / 2) for d in decisions[:-1]]))
    rows, moving = [], []
    for v in data["variants"]:
        budgets = v["budgets"]
        low, high = budgets[half]["rs_win_ci"]
        last = budgets[-1]["rs_win"]
        rows.append(
            {
                "preset": v["preset"],
                "rs_win": [b["rs_win"] for b in budgets],
                "rs_win_ci": [b["rs_win_ci"] for b in budgets],
            }
        )
        if not low <= last <= high:
            moving.append(v["preset"])
    return {
        "decisions": decisions,
        "seed": data["seed"],
        "deals": data["deals"],
        "variants": rows,
        "compared": [decisions[half], decisions[-1]],
        "moving": moving,
    }


def _n_star(v: VariantRow) -> str:
    """N* with its interval, ∞ where unbounded."""
    low, high = v["n_star_ci"]

    def one(x: float | None) -> str:
        return "∞" if x is None else f"{x:.1f}"

    return f"{one(v['n_star'])} [{one(low)}, {one(high)}]"


def _fmt(x: float | None, ci: list[float] | None = None, digits: int = 3) -> str:
    """``x [low, high]``."""
    if x is None:
        return "-"
    text = f"{x:.{digits}f}"
    return text if ci is None else f"{text} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def report_md(data: dict[str, Any]) -> str:
    """``report.md``: the tiers, the replication, the robustness grid, convergence, ground truth, the command."""
    rep, vs, rob = data["replication"], data["variants"], data["robustness"]
    cfg = data["config"]
    tiers: dict[int, list[str]] = {}
    for v in vs:
        tiers.setdefault(v["tier"], []).append(v["preset"])
    lines = [
        f"# Which Agurk variant rewards skill: the skill study ({cfg['players']} players, field `{cfg['field']}`)",
        "",
        "Relative skill RS = (R_best - R_random) / (R_fictive - R_random) by match win rate, the best fair agent "
        "chosen on separate deals (seed 0), measured in two independent replications "
        f"(deal seeds {rep['seeds'][0]} and {rep['seeds'][1]}) and pooled. Intervals are 95% bootstrap intervals over "
        f"deals ({cfg['resamples']} resamples); tiers come from Holm-corrected pairwise z-tests (family-wise 5%).",
        "",
        "## The answer: tiers",
        "",
    ]
    for t, names in sorted(tiers.items()):
        lines.append(f"- **Tier {t}**: {', '.join(names)}")
    lines += [
        "",
        "Within a tier the presets cannot be told apart at this size; a preset joins the tier above unless it is told "
        "apart from that tier's top preset.",
        "",
        "| rank | variant | tier | RS (win rate) | rank interval | RS (penalty) | tier (penalty) | "
        f"RS seed {rep['seeds'][0]} | RS seed {rep['seeds'][1]} | skill share | N* matches | deals per replication "
        "| best fair agent |",
        "|---:|---|---:|---|---|---|---:|---|---|---|---|---:|---|",
    ]
    for v in vs:
        r1, r2 = v["replications"]
        deals = max(r1["deals"].values())
        lines.append(
            f"| {v['rank']} | {v['preset']} | {v['tier']} | {_fmt(v['rs_win'], v['rs_win_ci'])} | "
            f"[{v['rank_ci'][0]:g}, {v['rank_ci'][1]:g}] | {_fmt(v['rs_penalty'], v['rs_penalty_ci'])} | "
            f"{v['tier_penalty']} | {_fmt(r1['rs_win'], r1['rs_win_ci'])} | {_fmt(r2['rs_win'], r2['rs_win_ci'])} | "
            f"{_fmt(v['skill_share'], v['skill_share_ci'])} | {_n_star(v)} | {deals} | {v['best_win']} |"
        )
    lines += [
        "",
        "The skill share is the share of one match's win/lose variance explained by which of the two real agents, "
        "random play or the best fair agent, plays (their win rates' variance less its sampling part, over p(1-p)); "
        "N* = 1 / share is the number of matches after which that skill difference is as large as luck (∞: not above "
        "zero). With only the two ends of skill it is larger than a full ladder's, so compare it across presets.",
    ]
    hw = rep["halfwidth"]
    lines += [
        "",
        "## Does it reproduce?",
        "",
        f"Spearman's rank correlation of RS (win rate) between the two replications: **{rep['spearman']:.3f}** "
        f"(95% bootstrap interval [{rep['spearman_ci'][0]:.3f}, {rep['spearman_ci'][1]:.3f}]); by penalty "
        f"{rep['spearman_penalty']:.3f} [{rep['spearman_penalty_ci'][0]:.3f}, {rep['spearman_penalty_ci'][1]:.3f}].",
        "",
        "RS (win rate) 95% half-width over the presets: "
        + "; ".join(f"seed {k}: median {x['median']:.4f}, max {x['max']:.4f}" for k, x in hw.items())
        + f"; pooled: median {rep['halfwidth_pooled']['median']:.4f}, max {rep['halfwidth_pooled']['max']:.4f}.",
        "",
        *_variance_lines(data["variance_reduction"]),
        "![tiers](tiers.png)",
        "",
        "## Robustness",
        "",
        f"Kendall's W over the rankings ({', '.join(rob['measures'])}): **{rob['kendall_w']:.3f}** (1 = the same "
        "order everywhere).",
        "",
    ]
    groups = [("field", k, g) for k, g in rob["fields"].items()] + [
        ("players", k, g) for k, g in rob["players"].items()
    ]
    if groups:
        header = "| variant | main rank | " + " | ".join(f"{kind} {k}: RS, rank, tier" for kind, k, _ in groups) + " |"
        lines += [header, "|---|---:|" + "---|" * len(groups)]
        by_preset = {v["preset"]: v for v in vs}
        for name in by_preset:
            cells = []
            for _, _, g in groups:
                row = next(r for r in g["variants"] if r["preset"] == name)
                cells.append(f"{_fmt(row['rs_win'], row['rs_win_ci'], 2)}, {row['rank']}, {row['tier']}")
            lines.append(f"| {name} | {by_preset[name]['rank']} | " + " | ".join(cells) + " |")
        lines.append("")
    if rob["disagree"]:
        lines.append(
            "Presets whose rank spreads most between the rankings: "
            + "; ".join(
                f"{d['preset']} ({', '.join(f'{k} {r}' for k, r in d['ranks'].items())})" for d in rob["disagree"]
            )
            + "."
        )
        lines.append("")
    lines += ["![robustness](robustness.png)", ""]
    conv = data.get("convergence")
    if conv:
        budgets = ", ".join(f"{d / 1e6:.1f}M" for d in conv["decisions"])
        lines += [
            "## Convergence",
            "",
            f"RS (win rate) per training budget of the network (from a skill report's convergence.json: seed "
            f"{conv['seed']}, {conv['deals']} deals per budget; budgets {budgets} "
            "decisions). Still moving at the last doubling (RS at the last budget outside the interval at "
            f"{conv['compared'][0] / 1e6:.1f}M): {', '.join(conv['moving']) or 'none'}.",
            "",
            "![convergence](convergence.png)",
            "",
        ]
    exact = data.get("exact_check") or []
    if exact:
        lines += [
            "## Ground truth in tiny games",
            "",
            "| setting | exact RS | sampled RS | difference |",
            "|---|---|---|---|",
        ]
        for e in exact:
            ci = e.get("sampled_rs_ci")
            lines.append(
                f"| {e['setting']} | {e['exact_rs']:.4f} | {_fmt(e['sampled_rs'], ci, 4)} | "
                f"{e['sampled_rs'] - e['exact_rs']:+.4f} |"
            )
        lines.append("")
    lines += ["## Command", "", "```bash", data["command"], "```", ""]
    return "\n".join(lines)


def _variance_lines(vr: dict[str, Any]) -> list[str]:
    """The report's paragraph and table on the control variates."""
    if not vr["presets"]:
        return ["No variance-reduced estimator was measured (--cv-deals 0).", ""]
    lines = [
        "## Variance reduction",
        "",
        f"{vr['estimator']}, on the same deals as the plain estimate: median RS half-width "
        f"{vr['halfwidth_plain']:.4f} plain, {vr['halfwidth_cv']:.4f} corrected, a median narrowing of "
        f"{vr['narrowing_median']:.2f}x. The ranking above uses the plain estimator on all deals.",
        "",
        "| variant | agent corrected | deals | RS plain | RS corrected | narrowing |",
        "|---|---|---:|---|---|---:|",
    ]
    for r in vr["presets"]:
        lines.append(
            f"| {r['preset']} | {r['agent']} | {r['deals']} | {_fmt(r['rs_win_plain'], r['rs_win_ci_plain'])} | "
            f"{_fmt(r['rs_win_cv'], r['rs_win_ci_cv'])} | {r['narrowing']:.2f}x |"
        )
    check = vr.get("unbiased_check")
    if check:
        lines += [
            "",
            f"Unbiasedness where the truth is known ({check['setting']}, `{check['agent']}` against `guard`, "
            f"{check['deals']} deals): exact win rate {check['exact']:.4f}; "
            f"plain {_fmt(check['plain'], check['plain_ci'], 4)}; "
            f"corrected {_fmt(check['corrected'], check['corrected_ci'], 4)}; corrected minus plain "
            f"{_fmt(check['difference'], check['difference_ci'], 4)}.",
        ]
    return [*lines, ""]


def write_study(study: Study, out: Path, command: str) -> dict[str, Any]:
    """Write ``study.json``, ``report.md`` and the plots into ``out``; return the JSON object."""
    from skill.study_plots import plot_convergence, plot_robustness, plot_tiers

    data = study_json(study, command)
    with atomic_file(out / "study.json") as f:
        f.write(json.dumps(data, indent=1).encode())
    with atomic_file(out / "report.md") as f:
        f.write(report_md(data).encode())
    plot_tiers(data, out / "tiers.png")
    plot_robustness(data, out / "robustness.png")
    if data["convergence"]:
        plot_convergence(data["convergence"], out / "convergence.png")
    return data


def skill_study(
    options: SkillStudyOptions, monitor: Callable[[str], Monitor] | None = None
) -> tuple[Study, dict[str, Any]]:
    """``agurk skill-study``: run (or resume from the cache) the study of ``options`` and write its files into --out.

    The study and the object of its ``study.json``; ``monitor(stage)`` gives each stage's progress callback.
    """
    config = checked_config(options)
    out = Path(options.out)
    claim_study(out, config, options.force)
    cache = Path(options.cache) if options.cache else out / "cache"
    study = run_study(config, cache, worker_count(options.workers), options.tasks_backend(), monitor)
    return study, write_study(study, out, study_command(config, options.out))

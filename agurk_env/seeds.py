"""Seed salts: the one table of the numbers a run's seed is mixed with, one per use of randomness.

A use draws from ``numpy.random.default_rng([seed, SALT, ...])``, or where a plain int seed is
needed (an engine seed, a torch generator) from ``seed * STRIDE + ...`` or ``seed + SALT``, so each
use has a stream of its own and none depends on another's draws. Seats draw from ``[seed, seat]``
(``agents.registry.make_agent``) and other small stream numbers are ``[seed, 1]``, ``[seed, 2]``;
the salts here keep clear of them. The values are the ones each module used before they were
gathered here, so every seeded result is unchanged; a new use takes a new name here (tested
distinct, tests/test_one_place.py). The tournament's bootstrap tag is kept beside its statistic,
``agents.tournament_stats.BOOTSTRAP_TAG``.
"""

from __future__ import annotations

SEATS = 0x5EA7
"""``agurk_env.learner_games``: the learner's seat in each new match."""
STATE_KEYS = 0xF1C7
"""``agents.fictive``: the multipliers of its state hash (a fixed seed, the same in every run)."""
PPO_DRAWS = 0x9001
"""``training.ppo``: the trainer's NumPy draws (the pool's opponents)."""
PPO_TABLES = 0x7AB1E
"""``training.ppo``: a mixture's tables, drawn again at each deal with the update count."""
PPO_TORCH = 1
"""``training.ppo``: its torch generator's seed is the run's seed plus this."""
EXPERT_DRAWS = 0xE1
"""``training.expert``: expert iteration's NumPy draws."""
EXPERT_TABLES = 0x7AB
"""``training.expert``: a mixture's tables of the self-play generations."""
EXPERT_TORCH = 2
"""``training.expert``: its torch generator's seed is the run's seed plus this."""
TABLE_STRIDE = 1_000_003
"""A trainer's table ``i`` deals from engine seed ``seed * TABLE_STRIDE + update * UPDATE_STRIDE + i``."""
UPDATE_STRIDE = 101
"""The update count's step in :func:`table_seed` (PPO deals afresh at each update)."""
CV_FIT = 104_729
"""``skill.variant``: added to a variant's seed for the deals the control variates are fitted on."""
CV_DEALS = 7001
"""``skill.control_variates``: the other deals its rounds are played out on."""
RESAMPLE_STRIDE = 7919
"""``skill.study_stats``: stream ``s`` of a bootstrap resamples the deals from ``seed * RESAMPLE_STRIDE + s``."""
SETTING_STRIDE = 1000
"""``skill.study``: setting ``i``'s bootstrap is seeded ``seed * SETTING_STRIDE + i``."""
LOAD_GAMES = 10_000
"""``agurk.web.load``: game ``g`` of the latency waves is seeded ``seed + LOAD_GAMES + g``."""
LOAD_WARM = 99_000
"""``agurk.web.load``: the warm-up wave, before anything is timed."""
LOAD_WAVE_STRIDE = 1000
"""``agurk.web.load``: wave ``i`` is seeded ``seed + LOAD_WAVE_STRIDE * i``."""


def table_seed(seed: int, table: int, update: int = 0) -> int:
    """The engine seed of a trainer's table ``table`` dealt at update ``update`` of a run seeded ``seed``."""
    return seed * TABLE_STRIDE + update * UPDATE_STRIDE + table

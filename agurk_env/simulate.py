"""Play whole matches on the batched engine and yield their game records.

Seeds and matches: ``simulate(rules, agents, n, seed)`` plays matches ``0..n-1`` of
``seed``. The deal of round ``r`` of match ``m`` is a function of ``(seed, m, r)``
alone (see :func:`agurk_env._rules_kernel.deal_order`), whatever the batch size or the slot
a match lands in. The engine starts matches ``0..batch-1`` and gives every slot whose
match ends the next unused number, so matches finish out of order: records are
buffered and yielded in match-number order, and matches numbered ``n`` or more are
played but dropped. The agents' randomness comes from their own generators, drawn
once per step for the games where their seat is to move; so a whole run is
reproducible for the same seed, batch size and agents (and the same for any batch
size when the agents choose deterministically from the legal set).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from agurk_env.agent import Agent
from agurk_env.matches import DEFAULT_BATCH, play_matches
from agurk_env.records import MatchRecord, Recorder
from agurk_env.rules import Rules


def simulate(
    rules: Rules,
    agents: Sequence[Agent],
    n_matches: int,
    seed: int,
    batch: int | None = None,
    with_legal: bool = False,
    progress: Callable[[int], object] | None = None,
) -> Iterator[MatchRecord]:
    """Yield the records of matches ``0..n_matches-1`` of ``seed``, in match-number order.

    ``agents`` holds one agent per seat (one object may sit in several seats; it is
    called once per step with all the games where one of its seats is to move).
    ``batch`` games run at once (default ``min(n_matches, DEFAULT_BATCH)``); ``with_legal``
    adds the legal sets to the records; ``progress(n_done)`` is called as matches end.
    An agent that returns an illegal card raises ``ValueError``.
    """
    if len(agents) != rules.players:
        raise ValueError(f"need one agent per seat ({rules.players}), got {len(agents)}")
    if n_matches <= 0:
        return
    batch = min(n_matches, DEFAULT_BATCH if batch is None else int(batch))
    if batch < 1:
        raise ValueError(f"batch must be >= 1, not {batch}")
    recorder = Recorder(rules, batch, [agent.spec for agent in agents], with_legal=with_legal)
    pending: dict[int, MatchRecord] = {}
    next_out = 0
    for step in play_matches(rules, agents, n_matches, seed, batch):
        if step.kept is not None:
            recorder.keep(step.kept)
        recorder.before_play(step.before, step.legal_bits)
        for record in recorder.after_play(step.after):
            if record["match"] < n_matches:
                pending[record["match"]] = record
                if progress is not None:
                    progress(len(pending) + next_out)
        while next_out in pending:
            yield pending.pop(next_out)
            next_out += 1

"""The search witness (skill.witness): the search that models an agent, and its paired gain over the agent."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from agurk_env.options import OptionError
from agurk_env.rules import Rules
from skill.exploit import matches_of
from skill.witness import policy_of, search_witness, witness_spec

FC_3X5 = {"players": 3, "hand_size": 5, "ace_lock": "any", "limit": 1, "match_end": "first_out"}
"""free_choice 3x5 any-ace single rounds, the table of the exploit report's second row of ``best``."""


def test_the_witness_models_the_network_best_plays():
    standard = Rules.preset("standard")
    assert witness_spec("best", standard, worlds=8) == (
        "guided:eval=rollout;belief=on;rollout=greedy;worlds=8;policy=zoo:standard-4p"
    )
    fc = Rules.preset("free_choice", **FC_3X5)
    assert witness_spec("best", fc, evaluation="exact").endswith("worlds=16;policy=zoo:free_choice-3x5-anyace-single")
    assert policy_of("zoo", standard) == ("zoo", "greedy")
    assert policy_of("ppo:runs/x/latest.pt;sample", standard) == ("runs/x/latest.pt", "sample")
    with pytest.raises(OptionError, match="plays no network"):
        policy_of("guard", standard)


def test_the_agent_in_the_searchs_seat_gains_exactly_zero():
    """The witness with the search replaced by the agent itself: the same cards on the same deals, a gain of 0."""
    w = search_witness(Rules.preset("free_choice", **FC_3X5), "best", "best", 30, 0, resamples=100)
    assert w["win_rate_gain"] == 0 and w["penalty_gain"] == 0
    assert w["win_rate_gain_ci"] == [0, 0] and w["penalty_gain_ci"] == [0, 0]
    assert w["entries"]["exploiter"] == {**w["entries"]["agent"], "spec": "best"}


def test_the_search_witness_plays_a_few_deals():
    rules = Rules.preset("free_choice", **FC_3X5)
    search = witness_spec("best", rules, worlds=2)
    w = search_witness(rules, "best", search, 3, 1, resamples=50)
    assert (w["agent"], w["search"], w["deals"], w["rules"]) == ("best", search, 3, rules.to_dict())
    assert w["entries"]["exploiter"]["spec"] == search and w["entries"]["agent"]["spec"] == "best"
    assert w["matches"] == matches_of(rules, "best", 3) == 3 * (3 + 1 + 3)  # best itself: one table of copies
    low, high = w["penalty_gain_ci"]
    assert low <= w["penalty_gain"] <= high
    e = w["entries"]
    assert w["penalty_gain"] == pytest.approx(e["agent"]["mean_penalty"] - e["exploiter"]["mean_penalty"])


@pytest.mark.parametrize("search", ["fictive", "oracle"])
def test_a_search_that_sees_every_card_is_refused(search):
    with pytest.raises(OptionError, match="sees every card"):
        search_witness(Rules.preset("free_choice", **FC_3X5), "best", search, 2, 0)

"""The PettingZoo AEC environment: conformance suite, masks against the reference, rewards, seeds, leaks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from agents.registry import make_agents
from agurk_env import engine, observation
from agurk_env.aec_env import env, raw_env
from agurk_env.reference import ReferenceMatch
from agurk_env.rewards import placement_rewards
from agurk_env.rules import CARDS, Rules
from agurk_env.simulate import simulate

with warnings.catch_warnings():  # pettingzoo.test loads PettingZoo's own classic games through their old creation API
    warnings.filterwarnings("ignore", "The old environment creation API", DeprecationWarning)
    from pettingzoo.test import api_test, render_test, seed_test

# (preset, options): several presets, 2..8 players, every scoring / end-of-match mode
CONFIGS = [
    ("standard", {}),
    ("danish21", {"players": 2}),
    ("lives", {"players": 3}),
    ("every_trick", {"players": 5}),
    ("second_chance", {"players": 6}),
    ("jokers", {"players": 7}),
    ("quick", {"players": 8, "hand_size": 6}),
    ("twos", {"players": 4, "hand_size": 4}),
]
IDS = [f"{name}-{opts.get('players', 4)}p" for name, opts in CONFIGS]


@pytest.mark.parametrize("episode", ["round", "match"])
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=IDS)
def test_pettingzoo_conformance(preset: str, options: dict, episode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test warns about things it cannot know (e.g. zero masks off-turn)
        api_test(env(preset, episode=episode, **options), num_cycles=400)
        seed_test(lambda: env(preset, episode=episode, **options), num_cycles=400)
        render_test(lambda render_mode=None: env(preset, episode=episode, render_mode=render_mode, **options))


@pytest.mark.parametrize("episode", ["round", "match"])
def test_pettingzoo_conformance_with_out_seats_leaving(episode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env("standard", episode=episode, out_seats="leave", limit=5), num_cycles=400)
        seed_test(lambda: env("standard", episode=episode, out_seats="leave", limit=5), num_cycles=400)


def _play_match(e, rng: np.random.Generator, check) -> None:
    """Random legal cards (dead steps for terminated agents) until the episode is over, ``check()`` before each step."""
    while e.agents:
        check()
        agent = e.agent_selection
        obs = e.observe(agent)
        e.step(None if e.terminations[agent] else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("episode", ["round", "match"])
def test_every_seat_stays_an_agent_until_the_episode_ends(episode: str) -> None:
    """Default ``out_seats="stay"``: all seats in ``agents`` and ``rewards``, no early end, seats out never move."""
    rules = Rules.preset("standard", limit=5)
    e = raw_env(rules, episode=episode)
    rng = np.random.default_rng(0)
    sat_out = 0

    def check() -> None:
        nonlocal sat_out
        st = e.engine_state
        done = [e.terminations[a] for a in e.agents]
        assert list(e.rewards) == e.agents
        assert all(done) or not any(done)  # everyone at once, at the end (then the dead steps)
        if not any(done):
            assert e.agents == e.possible_agents and st.alive[0, int(e.agent_selection[-1])]
            for s in np.flatnonzero(~st.alive[0]):
                sat_out += 1
                assert not e.observe(f"player_{s}")["action_mask"].any()

    for seed in range(4):
        e.reset(seed=seed)
        while True:
            _play_match(e, rng, check)
            if e.engine_state.match_over[0]:
                break
            e.reset()
    assert sat_out > 0


def test_out_seats_leave_keeps_the_earlier_behaviour() -> None:
    """``out_seats="leave"``: a seat out is terminated in the round it goes out and leaves; round episodes skip it."""
    rules = Rules.preset("standard", limit=5)
    rng = np.random.default_rng(1)
    m = raw_env(rules, episode="match", out_seats="leave")
    m.reset(seed=2)
    out_before_end = False

    def check() -> None:
        nonlocal out_before_end
        st = m.engine_state
        terminated = {a for a in m.agents if m.terminations[a]}
        assert {m.possible_agents[s] for s in np.flatnonzero(st.alive[0])} <= set(m.agents)
        if terminated and not st.match_over[0]:
            out_before_end = True
            assert all(not st.alive[0, int(a[-1])] for a in terminated)

    _play_match(m, rng, check)
    assert out_before_end and m.engine_state.match_over[0]
    r = raw_env(rules, out_seats="leave")
    r.reset(seed=2)
    while True:
        assert r.agents == [r.possible_agents[s] for s in np.flatnonzero(r.engine_state.alive[0])]
        _play_match(r, rng, lambda: None)
        if r.engine_state.match_over[0]:
            break
        r.reset()
    assert len(r.round_ends) > 1 and not r.round_ends[-2].alive[0].all()  # the last round was played without a seat
    with pytest.raises(ValueError, match="out_seats"):
        raw_env(rules, out_seats="remove")


def test_spaces_and_names() -> None:
    e = env("jokers", players=5)
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    space = e.observation_space("player_3")
    assert space["observation"].shape == (observation.SIZE,)
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (14,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_0").n == 14
    assert env("standard").action_space("player_0").n == 13
    obs = e.observe(e.agent_selection)
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8


def _reference_round(ref: ReferenceMatch, st: engine.State) -> None:
    hands = [[c for c, n in enumerate(row) for _ in range(n)] for row in st.hands[0].tolist()]
    ref.start_round(hands)


def _placement(ref: ReferenceMatch, finished: list[int], players: int) -> dict[int, float]:
    """The documented placement reward, computed from the reference's own bookkeeping."""
    winners = ref.winners if ref.match_over else []
    losers = [s for s in finished if s not in winners]
    better = sum(ref.alive) + sum(1 for s in winners if not ref.alive[s])
    rewards = {}
    for s in finished:
        place = (1 + len(winners)) / 2 if s in winners else better + (len(losers) + 1) / 2
        rewards[s] = 1 - 2 * (place - 1) / (players - 1)
    return rewards


CHUNKS = [
    ["standard", "danish21", "every_trick", "dealer_leads", "free_choice"],
    ["unbeatable_aces", "swedish", "second_chance", "buy_in", "small_ace", "jokers"],
    ["nearest", "twos", "ace_one_point", "lives", "quick", "last_trick_only"],
]


EPISODES_PER_CHUNK = 700  # 2100 episodes in all


@pytest.mark.parametrize("chunk", range(len(CHUNKS)))
def test_thousands_of_episodes_masks_and_rewards_match_the_reference(chunk: int) -> None:
    """Every mask is non-empty, equals the engine's legal mask and the scalar reference's legal set; rewards match."""
    rng = np.random.default_rng(chunk)
    episodes = i = 0
    while episodes < EPISODES_PER_CHUNK:
        i += 1
        preset = CHUNKS[chunk][i % len(CHUNKS[chunk])]
        players = int(rng.integers(2, 9))
        hand_size = int(rng.integers(1, min(7, (52 + Rules.preset(preset).jokers) // players) + 1))
        rules = Rules.preset(preset, players=players, hand_size=hand_size)
        episode = "match" if i % 2 else "round"
        e = raw_env(rules, episode=episode)
        e.reset(seed=int(rng.integers(1 << 31)))
        ref = ReferenceMatch(rules)
        for _ in range(20 if episode == "round" else 2):
            st = e.engine_state
            if not ref.in_round:
                if ref.match_over:
                    ref = ReferenceMatch(rules)
                _reference_round(ref, st)
            episodes += 1
            totals = dict.fromkeys(e.agents, 0.0)
            out_before = [s for s in range(players) if not ref.alive[s]]
            while e.agents:
                agent = e.agent_selection
                obs, reward, term, trunc, _ = e.last()
                totals[agent] += reward
                if term or trunc:
                    assert not obs["action_mask"].any()
                    e.step(None)
                    continue
                seat = int(agent.split("_")[1])
                assert seat == ref.to_move
                mask = obs["action_mask"].astype(bool)
                assert mask.any()
                assert np.array_equal(mask, engine.legal_mask(rules, e.engine_state)[0])
                assert np.flatnonzero(mask).tolist() == ref.legal()
                if rng.random() < 0.05:
                    for other in e.agents:
                        if other != agent:
                            assert not e.observe(other)["action_mask"].any()
                card = int(rng.choice(np.flatnonzero(mask)))
                e.step(card)
                ref.play(card)
                if episode == "match" and not ref.in_round:
                    # a round ended: the seats that left get their placement now
                    gone = list(ref.last_round.out)
                    if ref.match_over:
                        gone += [s for s in range(players) if ref.alive[s]]
                    expected = _placement(ref, gone, players)
                    for s in range(players):
                        if f"player_{s}" in e.rewards:
                            assert e.rewards[f"player_{s}"] == pytest.approx(expected.get(s, 0.0))
                    if not ref.match_over:  # the env dealt the next round: follow it
                        _reference_round(ref, e.engine_state)
            last = ref.last_round
            if episode == "round":
                for s, total in totals.items():
                    seat = int(s.split("_")[1])
                    assert total == pytest.approx(-last.penalties[seat] / rules.limit)
            else:
                assert ref.match_over
                assert e.record()["winners"] == ref.winners
                finished = [s for s in range(players) if s not in out_before]
                assert sorted(int(a.split("_")[1]) for a in totals) == finished
                assert sum(totals.values()) == pytest.approx(0.0, abs=1e-5) or out_before
            e.reset()
            if episode == "match":
                ref = ReferenceMatch(rules)
                _reference_round(ref, e.engine_state)


def test_placement_rewards_are_zero_sum_and_ordered() -> None:
    rules = Rules.preset("standard", players=5)
    e = raw_env(rules, episode="match")
    for seed in range(30):
        e.reset(seed=seed)
        got: dict[str, float] = {}
        order: list[str] = []
        rng = np.random.default_rng(seed)
        while e.agents:
            agent = e.agent_selection
            obs, reward, term, _, _ = e.last()
            if term:
                got[agent] = reward
                order.append(agent)
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(got.values()) == pytest.approx(0.0, abs=1e-5)
        winners = e.record()["winners"]
        assert len(got) == 5
        for w in winners:
            assert got[f"player_{w}"] == max(got.values())
        if len(winners) == 1:
            assert got[f"player_{winners[0]}"] == pytest.approx(1.0)


def test_last_trick_penalty_reaches_a_seat_that_did_not_act_last() -> None:
    rules = Rules.preset("standard")
    seen = False
    for seed in range(40):
        e = env(rules)
        e.reset(seed=seed)
        last_actor = None
        rng = np.random.default_rng(seed)
        rewards: dict[str, float] = {}
        while e.agents:
            agent = e.agent_selection
            obs, reward, term, _, _ = e.last()
            if term:
                rewards[agent] = reward
                e.step(None)
            else:
                last_actor = agent
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        penalties = e.unwrapped.record()["rounds"][-1]["penalties"]
        for agent, reward in rewards.items():
            assert reward == pytest.approx(-penalties[int(agent[-1])] / rules.limit)
        hit = [a for a, r in rewards.items() if r < 0]
        assert hit
        seen |= last_actor not in hit
    assert seen


def _simulated(rules: Rules, seed: int, n: int = 1) -> list[dict]:
    return list(simulate(rules, make_agents("random", rules.players, seed), n, seed))


@pytest.mark.parametrize(("preset", "options"), CONFIGS[:5], ids=IDS[:5])
def test_same_seed_same_deal_as_simulate(preset: str, options: dict) -> None:
    rules = Rules.preset(preset, **options)
    for seed in (0, 7, 123456789):
        e = env(rules)
        e.reset(seed=seed)
        dealt = e.unwrapped.record()["rounds"][0]["hands"]
        record = _simulated(rules, seed)[0]
        assert [sorted(h) for h in dealt] == [sorted(h) for h in record["rounds"][0]["hands"]]


@pytest.mark.parametrize("episode", ["round", "match"])
def test_replaying_a_simulated_match_gives_its_record(episode: str) -> None:
    """Play simulate's cards through the env (round episodes with resets, or one match): same record."""
    rules = Rules.preset("danish21", players=4)
    seed = 5
    records = _simulated(rules, seed, 2)
    e = env(rules, episode=episode)
    e.reset(seed=seed)
    for m, record in enumerate(records):
        assert e.unwrapped.record()["match"] == m
        for rnd in record["rounds"]:
            plays = [p for trick in rnd["tricks"] for p in trick["plays"]]
            for seat, card in plays:
                while e.terminations.get(e.agent_selection):
                    e.step(None)
                assert e.agent_selection == f"player_{seat}"
                e.step(CARDS.index(card))
            if episode == "round":
                while e.agents:
                    e.step(None)
                if rnd is not record["rounds"][-1]:
                    e.reset()
        got = e.unwrapped.record()
        assert {k: v for k, v in got.items() if k != "agents"} == {k: v for k, v in record.items() if k != "agents"}
        while e.agents:
            e.step(None)
        e.reset()  # the next match number


def test_record_of_a_round_in_progress() -> None:
    e = env("standard")
    e.reset(seed=3)
    dealt = e.unwrapped.record()["rounds"][0]
    assert dealt["tricks"] == [] and all(len(h) == 7 for h in dealt["hands"])
    for _ in range(6):  # one full trick and two cards of the next
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    rnd = e.unwrapped.record()["rounds"][0]
    assert rnd["hands"] == dealt["hands"]
    assert len(rnd["tricks"]) == 2 and "winner" in rnd["tricks"][0] and "winner" not in rnd["tricks"][1]
    assert len(rnd["tricks"][1]["plays"]) == 2
    assert "winners" not in e.unwrapped.record()


def test_reset_without_seed_moves_on() -> None:
    rules = Rules.preset("standard")
    records = _simulated(rules, 11, 2)
    e = env(rules, episode="match")
    e.reset(seed=11)
    e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    e.reset()  # an unfinished match is abandoned: match 1 of the same seed
    rec = e.unwrapped.record()
    assert rec["match"] == 1 and rec["seed"] == 11
    assert [sorted(h) for h in rec["rounds"][0]["hands"]] == [sorted(h) for h in records[1]["rounds"][0]["hands"]]
    r = env(rules)
    r.reset(seed=11)
    while r.agents:
        obs, _, term, _, _ = r.last()
        r.step(None if term else int(np.flatnonzero(obs["action_mask"])[0]))
    r.reset()  # round episodes: the next round of the same match
    assert r.unwrapped.record()["match"] == 0 and len(r.unwrapped.record()["rounds"]) == 2


def test_illegal_action_names_agent_card_and_legal_cards() -> None:
    e = env("standard")
    e.reset(seed=0)
    e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[-1]))  # lead the highest card
    agent = e.agent_selection
    mask = e.last()[0]["action_mask"].astype(bool)
    held = e.unwrapped.engine_state.hands[0, int(agent[-1])] > 0
    illegal = np.flatnonzero(~mask & held)
    wrong = int(illegal[0]) if illegal.size else int(np.flatnonzero(~mask)[0])
    legal_names = " ".join(CARDS[c] for c in np.flatnonzero(mask))
    with pytest.raises(ValueError, match=agent) as info:
        e.step(wrong)
    assert CARDS[wrong] in str(info.value) and legal_names in str(info.value)
    for bad in (13, -1, None, "K"):
        with pytest.raises(ValueError, match=agent):
            e.step(bad)
    e.step(int(np.flatnonzero(mask)[0]))  # the env is unchanged by the refused actions


def test_leak_hidden_cards_never_reach_an_observation() -> None:
    """Two deals that differ only in two opponents' hidden cards give the same observations to everyone else."""
    rng = np.random.default_rng(0)
    checked = 0
    for preset in ("standard", "danish21", "every_trick", "swedish", "twos", "nearest", "jokers", "lives"):
        for seed in range(6):
            rules = Rules.preset(preset)
            a, b = raw_env(rules), raw_env(rules)
            a.reset(seed=seed)
            hands = a.engine_state.hands[0].copy()
            p = rules.players
            x, y = rng.choice(p, 2, replace=False)
            cx = rng.choice(np.flatnonzero(hands[x] > hands[y]))  # a card x holds more of than y
            cy = rng.choice(np.flatnonzero(hands[y] > hands[x]))
            swapped = hands.copy()
            swapped[x, cx] -= 1
            swapped[y, cx] += 1
            swapped[y, cy] -= 1
            swapped[x, cy] += 1
            b.reset(seed=seed, options={"hands": swapped})
            watchers = [f"player_{s}" for s in range(p) if s not in (x, y)]
            while a.agents and b.agents and a.agent_selection == b.agent_selection:
                for w in watchers:
                    oa, ob = a.observe(w), b.observe(w)
                    assert np.array_equal(oa["observation"], ob["observation"]), (preset, seed, w)
                    assert np.array_equal(oa["action_mask"], ob["action_mask"])
                    checked += 1
                if a.terminations[a.agent_selection]:
                    break
                both = a.observe(a.agent_selection)["action_mask"] & b.observe(b.agent_selection)["action_mask"]
                if not both.any():
                    break
                card = int(rng.choice(np.flatnonzero(both)))
                a.step(card)
                b.step(card)
    assert checked > 1000


def test_reset_with_hands_option_is_checked() -> None:
    e = raw_env("standard", players=2)
    e.reset(seed=0, options={"hands": [["2", "3", "4", "5", "6", "7", "8"], ["A", "A", "A", "A", "K", "K", "K"]]})
    assert e.record()["rounds"][0]["hands"][1] == ["K", "K", "K", "A", "A", "A", "A"]
    with pytest.raises(ValueError, match="more copies"):
        e.reset(seed=0, options={"hands": [["A"] * 5 + ["2", "3"], ["4"] * 4 + ["5"] * 3]})
    with pytest.raises(ValueError, match="7 cards"):
        e.reset(seed=0, options={"hands": [["2"], ["3"]]})
    with pytest.raises(ValueError, match="unknown card"):
        e.reset(seed=0, options={"hands": [["Z"] * 7, ["3"] * 7]})


def test_render_shows_only_the_hand_of_the_agent_to_move(capsys: pytest.CaptureFixture[str]) -> None:
    e = env("standard", render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert isinstance(text, str) and text.count("holds") == 1 and e.agent_selection + " holds" in text
    assert "score" in text and "legal:" in text
    h = env("standard", render_mode="human")
    h.reset(seed=2)
    assert h.render() is None
    assert capsys.readouterr().out.strip() == text


def test_placement_rewards_function_cases() -> None:
    """Hand-made round ends: 4 seats, one already out; a sole winner; first_out with shared places."""
    rules = Rules.preset("standard")
    st = engine.init(rules, 2, 0)
    st = st._replace(
        alive=np.array([[True, False, False, False], [False, True, True, True]]),
        out_now=np.array([[False, True, True, False], [True, False, False, False]]),
        winners=np.array([[True, False, False, False], [False, False, False, False]]),
        match_over=np.array([True, False]),
    )
    finished, reward = placement_rewards(rules, st)
    assert finished.tolist() == [[True, True, True, False], [True, False, False, False]]
    assert reward[0].tolist() == pytest.approx([1.0, 0.0, 0.0, 0.0])
    assert reward[1, 0] == pytest.approx(-1.0)


def test_bench_env_reports_every_figure() -> None:
    from agurk.bench.env import bench_env

    result = bench_env(0.3, n_envs=64)
    for key in ("turns_per_s", "leduc_turns_per_s", "ratio", "sb3_steps_per_s", "floor_turns_per_s"):
        assert result[key] > 0, key
    agurk, leduc, sb3 = result["agurk"], result["leduc"], result["sb3"]
    for measured in (agurk, leduc, sb3):
        assert measured["seconds"] >= 0.3 and measured["episodes"] > 0
    # round episodes of a 4-seat match: 7 cards for each seat still in (2..4), dead steps not counted
    assert agurk["turns"] % 7 == 0 and 14 * agurk["episodes"] <= agurk["turns"] <= 28 * agurk["episodes"]
    assert leduc["turns"] >= leduc["episodes"]  # a hand of Leduc takes at least one action
    # sb3_vec_env: every game is stepped in lockstep and each learner plays 7 cards per round episode
    assert sb3["n_envs"] == result["sb3_n_envs"] == 64 and sb3["steps"] % 64 == 0
    assert sb3["episodes"] == 64 * (sb3["steps"] // 64 // 7)
    # a do-nothing env through the same wrapper and loop is faster than the real game
    assert result["floor_turns_per_s"] > result["turns_per_s"]

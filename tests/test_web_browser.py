"""``agurk serve``'s page in a real browser (Debian's chromium through chromedriver and Selenium).

A whole match played by clicking, an illegal card refused with its reason, the record
downloaded and replayed step by step, a simulate record opened from a file, a watched game.
``AGURK_SCREENSHOTS=docs/img`` saves the table's screenshots there (the docs' images).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="agurk serve needs the web extra")
pytest.importorskip("uvicorn", reason="agurk serve needs the web extra")
pytest.importorskip("selenium", reason="the browser tests drive chromium with selenium (test extra)")

import uvicorn
from replay import replay_record
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from agurk import cli
from agurk.replay import ReplayError, parse_record, steps
from agurk.web import session
from agurk.web.app import create_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="the browser tests need Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; "
    ".ci/run installs them)",
)
WAIT_S = 30


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1000"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download.default_directory": str(tmp_path)})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: WebDriver, condition, what: str):
    return WebDriverWait(driver, WAIT_S).until(condition, message=what)


def screenshot(driver: WebDriver, name: str) -> None:
    folder = os.environ.get("AGURK_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


def setup_game(
    driver: WebDriver, base_url: str, players: int, options: str, seed: int, speed: str = "", **fields: str
) -> None:
    """Open the page, fill in the table and ``fields`` (input ids), and click *New game* once.

    With a ``speed`` (slow ... fastest) the game is a watched one, on the *Watch* tab.
    """
    driver.get(base_url)
    wait(driver, lambda d: len(Select(d.find_element(By.ID, "preset")).options) > 1, "the presets load")
    if speed:
        driver.find_element(By.ID, "tab-watch").click()
        Select(driver.find_element(By.ID, "speed")).select_by_visible_text(speed)
    for field, value in {"players": str(players), "set": options, "seed": str(seed), **fields}.items():
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    driver.find_element(By.ID, "start").click()


def downloaded(folder: Path, pattern: str) -> dict | None:
    """The record downloaded into ``folder`` once the browser has finished writing it (``None`` before)."""
    files = list(folder.glob(pattern))
    try:
        return parse_record(files[0].read_text()) if files else None
    except ReplayError:  # still being written
        return None


HAND_STATE = """
const cards = [...document.querySelectorAll("#hand button")];
const lit = cards.filter((b) => b.classList.contains("legal"));
return [cards.map((b) => b.dataset.card), lit.map((b) => b.dataset.card),
        !document.getElementById("over").classList.contains("hidden"),
        Number(document.getElementById("game").dataset.moves)];
"""


def hand_state(driver: WebDriver) -> tuple[list[str], list[str], bool, int]:
    """The cards of the hand, the lit ones, whether the match is over, and the moves played (one snapshot)."""
    names, lit, over, moves = driver.execute_script(HAND_STATE)
    return names, lit, over, moves


def test_play_a_whole_match_by_clicking_then_download_and_replay_it(
    browser: WebDriver, base_url: str, tmp_path: Path
) -> None:
    setup_game(browser, base_url, players=3, options="hand_size=3", seed=1, opponents="guard")
    refused = clicks = 0
    while True:
        wait(browser, lambda d: hand_state(d)[2] or hand_state(d)[1], "your turn or the match's end")
        names, lit, over, moves = hand_state(browser)
        if over:
            break
        dimmed = [c for c in names if c not in lit]
        if dimmed and refused < 3:
            if not refused:  # the hint: best's card, lit, and a value for every lit card
                browser.find_element(By.ID, "hint").click()
                hint = wait(browser, ec.text_to_be_present_in_element((By.ID, "hint-out"), "best plays"), "the hint")
                assert hint
                text = browser.find_element(By.ID, "hint-out").text
                assert text.split("best plays ")[1].split(" ")[0] in lit and all(f"{c}:" in text for c in lit)
                screenshot(browser, "table.png")
            reason = browser.find_element(By.ID, "reason").text
            browser.find_element(By.CSS_SELECTOR, f'#hand button.dimmed[data-card="{dimmed[0]}"]').click()
            message = browser.find_element(By.ID, "message").text
            assert message.startswith(f"illegal: you may not play {dimmed[0]}:"), message
            assert reason.removeprefix("why: ") in message
            assert hand_state(browser) == (names, lit, False, moves)  # nothing was played
            refused += 1
        browser.find_element(By.CSS_SELECTOR, f'#hand button.legal[data-card="{lit[-1]}"]').click()
        clicks += 1
        wait(browser, lambda d, m=moves: hand_state(d)[3] > m, "the play is answered")
    assert refused >= 1, "seed 1 gives the person a card it may not play at least once"
    assert clicks >= 3 and "Match over" in browser.find_element(By.ID, "over-text").text
    screenshot(browser, "match-over.png")

    browser.find_element(By.ID, "download").click()
    rec = wait(browser, lambda _: downloaded(tmp_path, "agurk-seed1*.jsonl"), "the record is downloaded")
    assert rec["agents"] == ["human", "guard", "guard"]
    replay_record(rec)
    shown = browser.find_element(By.ID, "rounds").find_elements(By.TAG_NAME, "tr")
    assert len(shown) == len(rec["rounds"]) + 1  # the header row, then one per round

    browser.find_element(By.ID, "replay-this").click()
    total = len(steps(rec))
    wait(browser, ec.text_to_be_present_in_element((By.ID, "replay-pos"), f"1/{total}"), "the replay opens")
    pos = browser.find_element(By.ID, "replay-pos")
    assert "round 1 · trick 1/3" in browser.find_element(By.ID, "replay-head").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-frame .replay-seat")) == 3
    first = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#replay-frame .card")]
    assert len(first) == 9  # every hand shown: 3 seats x 3 cards
    for i in range(2, total + 1):
        browser.find_element(By.ID, "replay-next").click()
        assert pos.text == f"{i}/{total}"
    assert "match over" in browser.find_element(By.ID, "replay-head").text
    browser.find_element(By.ID, "replay-prev").click()
    assert pos.text == f"{total - 1}/{total}"


def test_open_a_simulate_record_from_a_file_and_step_through_it(
    browser: WebDriver, base_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "sim.jsonl"
    args = ["simulate", "--set", "players=3", "--set", "hand_size=2", "--agents", "guard", "--matches", "2"]
    assert cli.main([*args, "--out", str(out)]) == 0
    browser.get(base_url)
    browser.find_element(By.ID, "tab-replay").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(out))
    browser.find_element(By.ID, "replay-match").clear()
    browser.find_element(By.ID, "replay-match").send_keys("1")
    browser.find_element(By.ID, "replay-open").click()
    total = len(steps(parse_record(out.read_text(), 1)))
    pos = wait(browser, ec.text_to_be_present_in_element((By.ID, "replay-pos"), f"1/{total}"), "the replay opens")
    assert pos
    assert "match 1" in browser.find_element(By.ID, "replay-head").text
    for _ in range(total - 1):
        browser.find_element(By.ID, "replay-next").click()
    assert browser.find_element(By.ID, "replay-pos").text == f"{total}/{total}"
    assert "winners" in browser.find_element(By.ID, "replay-frame").text
    # a file that is no record: the server's one-line reason, shown
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    browser.find_element(By.ID, "replay-file").send_keys(str(bad))
    browser.find_element(By.ID, "replay-match").clear()
    browser.find_element(By.ID, "replay-match").send_keys("0")
    browser.find_element(By.ID, "replay-open").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "message"), "is not JSON"), "the reason is shown")


def test_watch_agents_play_a_match(browser: WebDriver, base_url: str) -> None:
    setup_game(browser, base_url, players=3, options="hand_size=2", seed=2, speed="fastest", agents="guard,shed,random")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".open-hand .card"), "every hand is shown")
    screenshot(browser, "watch.png")
    wait(browser, ec.visibility_of_element_located((By.ID, "over")), "the watched match ends")
    assert "winners" in browser.find_element(By.ID, "over-text").text


# ------------------------------------------------------------------ a new user's first hour (issue 46, items 12-18)

SHOWN = """
return [...arguments].map((id) => {
  const e = document.getElementById(id);
  return e !== null && e.offsetParent !== null;
});
"""
"""Whether each element (by id) is laid out on the page (neither it nor a parent hidden)."""

PLACEHOLDER_FITS = """
const box = document.getElementById("set");
const style = getComputedStyle(box);
const ctx = document.createElement("canvas").getContext("2d");
ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
const inner = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
return [box.tagName, box.placeholder, ctx.measureText(box.placeholder).width, inner];
"""


def shown(driver: WebDriver, *ids: str) -> list[bool]:
    return driver.execute_script(SHOWN, *ids)


def test_the_replay_tab_shows_no_empty_table_before_a_file_is_open(browser: WebDriver, base_url: str) -> None:
    browser.get(base_url)
    browser.find_element(By.ID, "tab-replay").click()
    assert shown(browser, "replay-view", "replay-frame", "game") == [False, False, False]
    assert not browser.find_element(By.ID, "replay-next").is_enabled()
    assert shown(browser, "intro") == [True] and "Choose a record file" in browser.find_element(By.ID, "intro").text


def test_the_first_page_says_what_to_do(browser: WebDriver, base_url: str) -> None:
    browser.get(base_url)
    wait(browser, lambda d: len(Select(d.find_element(By.ID, "preset")).options) > 1, "the presets load")
    assert shown(browser, "intro", "game") == [True, False]  # no blank area: what to do, until a game is dealt
    assert "press New game" in browser.find_element(By.ID, "intro").text
    tag, placeholder, needs, has = browser.execute_script(PLACEHOLDER_FITS)
    assert tag == "INPUT" and placeholder == "e.g. hand_size=5, limit=21" and needs <= has, (needs, has)
    icon = browser.find_element(By.CSS_SELECTOR, 'link[rel="icon"]').get_attribute("href")
    assert icon.endswith("/static/favicon.svg")
    browser.find_element(By.ID, "tab-watch").click()
    assert "to watch them play" in browser.find_element(By.ID, "intro").text
    browser.find_element(By.ID, "start").click()
    wait(browser, lambda d: shown(d, "game") == [True], "the watched game is dealt")
    assert shown(browser, "intro") == [False]


def test_a_stale_hint_is_gone_once_the_turn_is_played(
    browser: WebDriver, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session, "HINT_AGENT", "pimc", raising=False)  # any agent: the page is tested, not the card
    setup_game(browser, base_url, players=3, options="hand_size=3", seed=1, opponents="guard")
    for _ in range(3):
        wait(browser, lambda d: hand_state(d)[1], "your turn")
        _, lit, _, moves = hand_state(browser)
        browser.find_element(By.ID, "hint").click()
        wait(browser, ec.text_to_be_present_in_element((By.ID, "hint-out"), " plays "), "the hint")
        assert browser.find_elements(By.CSS_SELECTOR, "#hand button.hinted")
        browser.find_element(By.CSS_SELECTOR, f'#hand button.legal[data-card="{lit[0]}"]').click()
        wait(browser, lambda d, m=moves: hand_state(d)[3] > m, "the play is answered")
        _, lit, over, _ = hand_state(browser)
        assert not over and lit, "seed 1 gives the person three turns in a row"
        assert browser.find_element(By.ID, "hint-out").text == ""  # the hint was for the turn just played
        assert not browser.find_elements(By.CSS_SELECTOR, "#hand button.hinted")


REASON_AND_NAMES = """
return [document.getElementById("reason").textContent,
        [...document.querySelectorAll("#seats .seat .name")].map((n) => n.textContent)];
"""


def test_watching_speaks_of_the_seat_to_move_never_to_you(browser: WebDriver, base_url: str) -> None:
    setup_game(browser, base_url, players=3, options="hand_size=3", seed=2, speed="normal", agents="guard,shed,random")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#seats .seat"), "the watched game is dealt")
    reasons: set[str] = set()
    while len(reasons) < 3:  # read while the game is watched: the spectator is never "you"
        reason, names = browser.execute_script(REASON_AND_NAMES)
        assert names == ["P0 guard", "P1 shed", "P2 random"]
        if reason:
            assert not re.search(r"\byou(rs?)?\b", reason, re.IGNORECASE), reason
            reasons.add(reason)
        time.sleep(0.1)


def test_a_watched_game_stays_on_the_watch_tab(browser: WebDriver, base_url: str) -> None:
    setup_game(browser, base_url, players=3, options="hand_size=3", seed=2, speed="fastest", agents="guard,shed,random")
    wait(browser, ec.visibility_of_element_located((By.ID, "over")), "the watched match ends")

    browser.find_element(By.ID, "tab-play").click()  # the watched game, every hand in it, is Watch's only
    assert shown(browser, "game", "intro") == [False, True]
    assert not [c for c in browser.find_elements(By.CSS_SELECTOR, ".card") if c.is_displayed()]
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("1")
    browser.find_element(By.ID, "opponents").clear()
    browser.find_element(By.ID, "opponents").send_keys("guard")
    browser.find_element(By.ID, "start").click()
    wait(browser, lambda d: hand_state(d)[1], "your turn")
    assert browser.execute_script(REASON_AND_NAMES)[1] == ["P0 you", "P1 guard", "P2 guard"]
    assert not browser.find_elements(By.CSS_SELECTOR, ".open-hand .card")  # the others' hands hidden

    browser.find_element(By.ID, "tab-watch").click()  # each tab keeps its own game
    assert "winners" in browser.find_element(By.ID, "over-text").text
    assert browser.execute_script(REASON_AND_NAMES)[1] == ["P0 guard", "P1 shed", "P2 random"]
    browser.find_element(By.ID, "tab-play").click()
    names, lit, over, _ = hand_state(browser)
    assert names and lit and not over


def test_once_you_are_out_you_step_through_the_rest_or_watch_it(browser: WebDriver, base_url: str) -> None:
    setup_game(browser, base_url, players=3, options="hand_size=3, limit=10", seed=4, opponents="guard")
    while not shown(browser, "out-area")[0]:
        wait(browser, lambda d: hand_state(d)[1] or hand_state(d)[2] or shown(d, "out-area")[0], "your turn, or out")
        if shown(browser, "out-area")[0]:
            break
        _, lit, over, moves = hand_state(browser)
        assert not over, "seed 4 puts the person out before the match ends: the rest waits for them"
        browser.find_element(By.CSS_SELECTOR, f'#hand button.legal[data-card="{lit[-1]}"]').click()
        wait(browser, lambda d, m=moves: hand_state(d)[3] > m, "the play is answered")
    assert "You are out" in browser.find_element(By.ID, "out-text").text
    rounds = len(browser.find_elements(By.CSS_SELECTOR, "#rounds tr"))
    _, _, over, moves = hand_state(browser)
    assert not over and rounds == 3  # the header and the two rounds played: the rest is still to come
    time.sleep(1.5)
    assert hand_state(browser)[3] == moves  # nothing is played until asked
    for i in range(1, 4):
        browser.find_element(By.ID, "step-one").click()
        wait(browser, lambda d, m=moves + i: hand_state(d)[3] == m, "one move per Next move")
        if i == 1:  # the new round's first card, on the table for you to see
            assert len(browser.find_element(By.ID, "trick").find_elements(By.CSS_SELECTOR, ".card")) == 1
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("fastest")
    browser.find_element(By.ID, "play-on").click()
    wait(browser, ec.visibility_of_element_located((By.ID, "over")), "the agents play the match to its end")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rounds tr")) > rounds
    assert "you lose" in browser.find_element(By.ID, "over-text").text


def test_a_duplicate_match_shows_both_results_and_the_panel(browser: WebDriver, base_url: str) -> None:
    """A duplicate game vs random played by clicking: the two results on the same cards, then the panel's row."""
    setup_game(browser, base_url, 3, "hand_size=3", 0, opponents="guard", duplicate="random", name="erin")
    wait(browser, lambda d: "duplicate deal 0 of erin vs random" in d.find_element(By.ID, "status-line").text, "deal 0")
    result = browser.find_element(By.ID, "dup-result")
    while not result.is_displayed():
        moves = browser.find_element(By.ID, "game").get_attribute("data-moves")
        legal = browser.find_elements(By.CSS_SELECTOR, "#hand .legal")
        if legal:
            legal[0].click()
        elif browser.find_element(By.ID, "play-on").is_displayed():
            browser.find_element(By.ID, "play-on").click()  # out: the agents play on to the end
            wait(browser, lambda d: result.is_displayed(), "the duplicate result once the match is over")
            break
        wait(
            browser,
            lambda d, moves=moves: (
                result.is_displayed()
                or d.find_element(By.ID, "game").get_attribute("data-moves") != moves
                or d.find_element(By.ID, "play-on").is_displayed()
            ),
            "the agents' replies",
        )
    table = browser.find_element(By.ID, "dup-compare").text
    assert "you (erin)" in table and "random" in table and "you − agent" in table
    row = wait(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, '#dup-table tr[data-person="erin"]'),
        "erin's row in the panel",
    )[0]
    assert row.find_element(By.CSS_SELECTOR, ".matches").text == "1" and "[" in row.text

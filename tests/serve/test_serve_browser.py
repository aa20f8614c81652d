"""The browser client end to end: a real server (uvicorn on a free loopback port) and a real
headless browser (Debian's chromium driven by Playwright). The test opens the page,
starts a game, founds a city, changes its production, moves a unit, asks the text agent, ends
the turn and checks that the game's corpus log holds exactly those decisions; a screenshot is
taken (and copied to $NLMCS_SCREENSHOT when set). Another test checks what the page tells a new
player: what to do before a game exists, which colour is theirs, the turn each game to resume
is at, and the API page. Skips, saying why, where chromium or
Playwright is missing (`apt-get install chromium`; `playwright install` is not needed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
import uuid

import pytest


@pytest.fixture
def server(request):
    """(base URL, app) of a server running in a thread; stopped (and so ingesting) at the end.
    Its map is "small" unless the test is parametrized with another (indirect=True)."""
    import uvicorn

    from nlmcs.serve.app import create_app
    from nlmcs.serve.config import ServeConfig

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(ServeConfig(corpus=f"serve-browser-{uuid.uuid4().hex[:8]}",
                                 map=getattr(request, "param", "small")))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        srv.should_exit = True
        thread.join(timeout=60)


def _open(browser, url: str, width: int, height: int):
    """The game's page, with the console errors and warnings it logs (a test ends with none)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning")
            else None)  # fmt: skip
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(url + "/")
    return page, problems


def test_play_a_turn_in_the_browser_and_find_it_in_the_corpus_log(browser, server, tmp_path):
    url, app = server
    page, problems = _open(browser, url, 1400, 950)
    page.locator("#seed").fill("3")
    page.locator("#new-game").click()
    page.wait_for_function("location.hash.startsWith('#game=')")
    game_id = page.evaluate("location.hash").removeprefix("#game=")
    assert page.locator("#turn").inner_text().startswith("turn 0 / 100")

    # Select the first settlers in the list and found a city with it.
    page.locator("#agents li", has_text=re.compile(r"unit:\d+ settlers")).first.click()
    settlers = page.locator("#agents li.selected").get_attribute("data-agent")
    page.locator(".action[data-kind=build_city]").click()
    city = page.locator("#agents li", has_text="city")
    city.wait_for()
    city_agent = city.get_attribute("data-agent")

    # The city: change what it builds.
    city.click()
    page.locator("#build-select").select_option(label="build settlers (40 shields)")
    page.wait_for_function(f"document.querySelector('#agents li[data-agent=\"{city_agent}\"]')"
                           ".classList.contains('done')")
    assert "build settlers" in page.locator(f"#agents li[data-agent=\"{city_agent}\"]").inner_text()

    # Move the warriors one step by clicking a highlighted tile on the map.
    page.locator("#agents li", has_text="warriors").click()
    warriors = page.locator("#agents li.selected").get_attribute("data-agent")
    view = page.evaluate(f"fetch('/api/games/{game_id}').then(r => r.json())")
    moves = [a for a in next(a for a in view["agents"] if a["agent"] == warriors)["actions"]
             if a["kind"] == "move"]
    target = moves[0]["target"]
    tile = page.evaluate("tile")
    width = view["state"]["map"]["width"]
    page.locator("#map").click(position={"x": (target % width + 0.5) * tile,
                                         "y": (target // width + 0.5) * tile})
    page.wait_for_function(f"document.querySelector('#agents li[data-agent=\"{warriors}\"]')"
                           ".classList.contains('done')")

    # End the turn with the keyboard; the opponent's moves are listed.
    page.locator("#map").click(position={"x": 1, "y": 1})
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#turn').textContent.startsWith('turn 1 ')")
    assert page.locator("#opponent-moves li").count() >= 1

    # Ask the text agent about the other settlers.
    page.locator("#agents li", has_text=re.compile(r"unit:\d+ settlers")).click()
    page.locator("#advice-button").click()
    page.locator("#advice blockquote").wait_for(timeout=120_000)
    advice = page.locator("#advice").inner_text()
    assert "Text agent would" in advice and "p = " in advice

    shot = tmp_path / "serve.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:4] == b"\x89PNG"
    if os.environ.get("NLMCS_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["NLMCS_SCREENSHOT"])
    assert not problems, problems

    path = app.state.table.logs / f"human-{game_id}.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    mine = [(x["agent"], x["action"]["kind"], x["action"]["arg"]) for x in lines
            if x["type"] == "decision" and x["player"] == 0]
    assert mine == [(settlers, "build_city", None), (city_agent, "build", "settlers"),
                    (warriors, "move", moves[0]["arg"])]
    assert lines[0]["players"][0] == {"player": 0, "kind": "human", "name": "human"}
    assert lines[-1]["type"] == "turn" and lines[-1]["turn"] == 1
    page.close()


@pytest.mark.parametrize("server", ["tiny"], indirect=True)
def test_the_page_guides_a_new_player_and_offers_games_at_their_turn(browser, server):
    url, _ = server
    page, problems = _open(browser, url, 1200, 900)
    page.wait_for_function("document.querySelector('#map-select').options.length > 0")
    # No game: the board says what to do first; no empty canvas, no hint about units.
    assert page.locator("#empty").is_visible()
    assert "No game yet" in page.locator("#empty").inner_text()
    assert not page.locator("#map").is_visible() and not page.locator("#legend").is_visible()
    assert "Click one of your units" not in page.locator("#board").inner_text()

    page.locator("#new-game").click()
    page.wait_for_function("location.hash.startsWith('#game=')")
    first = page.evaluate("location.hash").removeprefix("#game=")
    # the address changes before the game is drawn: wait for the board, not for a moment
    page.locator("#empty").wait_for(state="hidden")
    page.locator("#map").wait_for(state="visible")
    page.wait_for_function("document.querySelector('#hover').textContent.includes("
                           "'Click one of your units')")
    page.locator("#legend").wait_for(state="visible")
    # The legend: your colour, then the opponent's, with the swatches the map is drawn in.
    legend = page.locator("#legend")
    assert re.match(r"You:\s*red\s+Opponent:\s*blue \(builtin:normal\)", legend.inner_text())
    swatch = page.evaluate("getComputedStyle(document.querySelector("
                           "'#legend [data-player=\"0\"] .swatch')).backgroundColor")
    assert swatch == "rgb(214, 39, 40)"  # #d62728, the server's colour of seat 0

    # The game on the board is not offered for resuming; after a turn and a new game it is,
    # at the turn it reached.
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#turn').textContent.startsWith('turn 1 ')")
    assert first not in page.locator("#resumable").inner_text()
    page.locator("#new-game").click()
    page.wait_for_function(f"!location.hash.endsWith('{first}')")
    second = page.evaluate("location.hash").removeprefix("#game=")
    page.wait_for_function("document.querySelector('#resumable').textContent.includes("
                           f"'resume {first} (turn 1)')")
    # A reload keeps the game on the board out of the list, and the list follows the turns.
    page.reload()
    page.wait_for_function("document.querySelector('#turn').textContent.startsWith('turn 0 ')")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#turn').textContent.startsWith('turn 1 ')")
    page.locator("#resumable a", has_text=first).click()
    page.wait_for_function(f"location.hash.endsWith('{first}') && document.querySelector("
                           "'#resumable').textContent.includes('" + f"resume {second} (turn 1)')")
    assert first not in page.locator("#resumable").inner_text()

    page.goto(url + "/docs")
    assert "JSON API" in page.locator("h1").inner_text()
    assert page.locator("h3", has_text="/api/games/{game_id}/end-turn").count() == 1
    assert not problems, problems
    page.close()

"""The relevance report in a real headless browser (Debian's chromium driven by Playwright):
it renders offline with no console errors, asks for nothing over the network, every
image decodes, and a screenshot is taken. Skips, saying why, where chromium or Playwright is
missing (`apt-get install chromium`, `pip install playwright`; `playwright install` is not
needed)."""

from __future__ import annotations


def test_report_renders_in_chromium_without_errors(browser, text_game, tmp_path):
    _, report = text_game
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems, requests = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning")
            else None)  # fmt: skip
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.resolve().as_uri())
    page.wait_for_load_state("load")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"
    assert not problems, problems
    assert requests == [report.resolve().as_uri()]  # the page itself, nothing else
    images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
    assert len(images) >= 5 and all(done and width > 0 for done, width in images)
    assert page.locator("h1").inner_text().startswith("Relevance report")
    assert page.locator(".w-action, .w-state").count() > 0
    # the step links jump within the page
    page.locator("nav a", has_text="timeline").click()
    assert page.evaluate("window.location.hash") == "#timeline"
    page.close()

"""The documentation site, built as `make docs` builds it and opened in real headless
Chromium over HTTP on loopback: it builds with no warning (a broken link or anchor is
an error), its pages render with their navigation, and its search box finds a plugin
by name and leads to the page that documents it."""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.doc_examples import ROOT
from tests.functional.chromium import Chromium

PAGES = {  # page -> a heading it must render
    "index.html": "nsb: Network Services Benchmarking",
    "getting-started.html": "Getting started",
    "concepts/results.html": "Results",
    "how-to/vswitch.html": "vSwitch benchmarks: Phy2Phy, PVP, PVVP with Open vSwitch",
    "reference/plugins.html": "Plugin options",
    "accuracy/index.html": "How accurate the numbers are",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr
    return out


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    for domain in ("Page", "Runtime"):
        chromium.page(f"{domain}.enable")
    yield chromium
    chromium.close()


def _open(browser: Chromium, url: str) -> None:
    browser.events.clear()
    browser.page("Page.navigate", url=url)
    browser.wait_for_event("Page.loadEventFired")


def _evaluate(browser: Chromium, expression: str):
    return browser.page("Runtime.evaluate", expression=expression,
                        returnByValue=True)["result"].get("value")


def test_every_page_of_the_site_is_built(site):
    pages = {str(p.relative_to(ROOT / "docs").with_suffix(".html"))
             for p in (ROOT / "docs").rglob("*.md")}
    built = {str(p.relative_to(site)) for p in site.rglob("*.html")}
    assert pages <= built
    assert (site / "search" / "search_index.json").is_file()


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_page_renders_with_its_heading_and_the_navigation(browser, served, page):
    _open(browser, f"{served}/{page}")
    shown = _evaluate(browser, """JSON.stringify({
        h1: (document.querySelector('article h1') || {}).textContent,
        nav: [...document.querySelectorAll('.md-nav--primary .md-nav__link')]
               .map(a => a.textContent.trim()),
        words: document.querySelector('article').innerText.split(/\\s+/).length})""")
    rendered = json.loads(shown)
    assert rendered["h1"].replace("¶", "").strip() == PAGES[page]
    for part in ("Getting started", "Concepts", "How-to guides", "Reference", "Accuracy",
                 "Development"):
        assert part in rendered["nav"], rendered["nav"]
    assert rendered["words"] > 100


def test_the_search_box_finds_a_plugin_by_name(browser, served):
    """Typed into Material's search box: the results list vCGNAPT's guide and the page
    with every plugin's options, which has its section and its options' table."""
    _open(browser, f"{served}/index.html")
    _evaluate(browser, """(() => {
        const box = document.querySelector('input.md-search__input');
        box.focus(); box.value = 'vcgnapt';
        box.dispatchEvent(new Event('input', {bubbles: true}));
        box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 't'}));
    })()""")
    links = []
    deadline = time.monotonic() + 30  # the search worker builds its index first
    while time.monotonic() < deadline and not links:
        time.sleep(0.3)
        links = json.loads(_evaluate(browser, """JSON.stringify(
            [...document.querySelectorAll('.md-search-result__link')].map(a => a.href))"""))
    assert any("/how-to/samplevnf.html" in link for link in links), links  # its guide
    target = next((link for link in links if "/reference/plugins.html" in link), None)
    assert target, links  # and the page with every plugin's options
    _open(browser, target)
    heading = _evaluate(browser, "(document.getElementById('vcgnapt') || {}).textContent")
    assert heading and heading.replace("¶", "").strip() == "vcgnapt"
    options = _evaluate(browser, """(() => {
        let node = document.getElementById('vcgnapt').nextElementSibling;
        while (node && !node.querySelector('table') && node.tagName !== 'TABLE')
            node = node.nextElementSibling;
        return node ? node.innerText : null; })()""")
    assert "bin_path" in options and "hugepage_size" in options, options

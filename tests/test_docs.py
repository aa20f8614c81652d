"""The documentation builds as a site with no broken link, and README stays a page."""

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site as `mkdocs build --strict` writes it (any warning, a broken link or anchor
    included, fails the build)."""
    out = tmp_path_factory.mktemp("docs") / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(out)], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


class _Links(HTMLParser):
    """The href and src of every element, and every id, of one HTML page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append(value)
            elif name in ("id", "name") and value:
                self.ids.add(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_mkdocs_builds_strict(site):
    # use_directory_urls: false, so pages are NAME.html and links work opened from disk
    assert (site / "index.html").is_file()
    assert (site / "getting-started.html").is_file()
    assert (site / "net.html").is_file()
    assert not (site / "net").exists()


def test_site_links_resolve_to_files_from_disk(site):
    """Every internal link of the built site names a file that exists (never a folder, which a
    browser opening the site from disk shows as a listing), and every #anchor an id there."""
    pages = {page: _parse(page) for page in site.rglob("*.html")}
    assert len(pages) > 10
    bad = []
    for page, parsed in pages.items():
        if page == site / "404.html":
            continue  # only a web server shows it, for any path, so its links start at "/"
        for link in parsed.links:
            url = urlsplit(link)
            if url.scheme or link.startswith("//"):
                continue  # http(s), mailto, data: outside the site
            if not url.path:
                target = page
            else:
                target = (page.parent / unquote(url.path)).resolve()
                if not target.is_file():
                    bad.append(f"{page.relative_to(site)}: {link} (no such file)")
                    continue
            if url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(url.fragment) not in ids:
                    bad.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not bad, "\n".join(bad)


def test_home_page_leads_into_the_site():
    """The home page sends a new reader to the getting-started page, not to a README the site
    does not hold."""
    home = (ROOT / "docs" / "index.md").read_text()
    assert "(getting-started.md)" in home
    assert "README" not in home
    nav = (ROOT / "mkdocs.yml").read_text()
    assert "use_directory_urls: false" in nav
    assert "getting-started.md" in nav


def test_readme_is_a_page_whose_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 200
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).exists(), target
    assert "build/site" in text  # where the site is built

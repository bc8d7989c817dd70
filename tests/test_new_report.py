"""``python -m generators new-report``: a complete report from a raw capture folder, built.

Works on a copy of the project (data, docs, mkdocs.yml; generators
and locales linked), so the checkout is never touched. The build reuses the session build's
cache: only the new report is computed.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
import yaml

from tests.browser_helpers import chromium, needs_chromium, recording_page, serve

# CLI runs of new-report on a copy of the project (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1"
RAW_FILES = [
    "trace_fused.json.xz",
    "ncu_fused_raw.csv.gz",
    "ncu_fused_details.csv.gz",
    "meta.json",
    "ncu_run.json",
    "timing.json",
]
UNITS = [
    "overview",
    "setup",
    "top",
    "categories",
    "variants",
    "classification",
    "review",
    "longest",
    "histograms",
    "ridge",
    "roofline",
    "roofline_normalized",
    "roofline_kernels",
    "methodology",
    "names",
]


# Titles from the command line that try Jinja (the page is a mkdocs-macros template), HTML and
# markdown (issue 17): each must show literally as the page's heading.
TITLES = {
    "en": "A copy of the decode report {{ config.site_name }} {% if true %}jinja{% endif %} {# c #} "
    "</title><script>alert(document.domain)</script> *not emphasis* [a](javascript:alert(document.domain)) # | x",
    "zh": "解码报告的副本 {{ config.site_name }} <img src=x onerror=alert(document.domain)> **不加粗**",
}


def run(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generators", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {})),
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "data", root / "data")  # the sweep report's pages need its traces
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    for link in ("generators", "locales"):
        (root / link).symlink_to(ROOT / link)
    raw = root / "raw"
    raw.mkdir()
    for name in RAW_FILES:
        shutil.copy(SOURCE / name, raw / name)
    (raw / "notes.txt").write_text("not an export\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def created(project) -> subprocess.CompletedProcess:
    return run(
        "new-report",
        "decode-copy",
        "--kind",
        "kernel-profile",
        "--from",
        str(project / "raw"),
        "--root",
        str(project),
        "--title",
        "en=" + TITLES["en"],
        "--title",
        "zh=" + TITLES["zh"],
    )


def test_creates_data_config_pages_and_nav(project, created):
    assert created.returncode == 0, created.stderr
    target = project / "data" / "reports" / "decode-copy"
    assert sorted(p.name for p in (target / "v1").iterdir()) == sorted(RAW_FILES + ["notes.txt"])
    config = yaml.safe_load((target / "report.yml").read_text(encoding="utf-8"))
    assert config["kind"] == "kernel-profile" and config["hardware"] == "h100-sxm"
    assert config["measured_peaks"] == "peaks-h100-80gb-hbm3/v2"  # the latest peaks run of that GPU
    assert config["primary"] == "fused" and config["range"] == "decode"
    fused = config["variants"]["fused"]
    assert (fused["timeline"], fused["metrics"]) == ("trace_fused.json.xz", "ncu_fused_raw.csv.gz")
    assert fused["attention_ranges"] == ["aten::scaled_dot_product_attention"] and fused["timing"] == "fused"
    for lang, title in TITLES.items():
        page = (project / "docs" / lang / "reports" / "decode-copy.md").read_text(encoding="utf-8")
        assert page.startswith("---\nreport: decode-copy\n---\n\n# ")
        heading = page.split("\n")[4]
        # the heading, as Python-Markdown renders it, is the title as text; no Jinja is left in it
        assert _text_of(markdown.markdown(heading, extensions=["tables"]), "h1") == title, heading
        assert not re.search(r"\{[{%#]", heading), heading
        for unit in UNITS:
            assert f'unit("kernel_profile.{unit}")' in page, (lang, unit)
        assert "__" not in page, "a template placeholder was left"
    nav = yaml.safe_load(re.sub(r"!ENV \[[^\]]*\]", "x", (project / "mkdocs.yml").read_text(encoding="utf-8")))
    reports = next(item["Reports"] for item in nav["nav"] if isinstance(item, dict) and "Reports" in item)
    assert reports[-1] == "reports/decode-copy.md"


class _Texts(HTMLParser):
    """The text of every ``tag`` element, and every element's name."""

    def __init__(self, tag: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tag, self.depth, self.texts, self.tags = tag, 0, [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == self.tag:
            self.depth += 1
            self.texts.append("")

    def handle_endtag(self, tag):
        self.depth -= tag == self.tag

    def handle_data(self, data):
        if self.depth:
            self.texts[-1] += data


def _text_of(html: str, tag: str) -> str:
    parser = _Texts(tag)
    parser.feed(html)
    assert len(parser.texts) == 1, parser.texts
    return " ".join(parser.texts[0].split())


def test_refuses_to_overwrite(project, created):
    again = run(
        "new-report", "decode-copy", "--kind", "kernel-profile", "--from", str(project / "raw"), "--root", str(project)
    )
    assert again.returncode == 2 and again.stdout == ""
    assert re.fullmatch(r"error: \S+decode-copy: already exists; new-report never overwrites\n", again.stderr)


@pytest.mark.parametrize(
    "args, message",
    [
        (["Bad_Id", "--from", "{raw}"], r"error: report id 'Bad_Id'"),
        (["fresh", "--from", "{root}/nowhere"], r"error: \S+/nowhere: raw capture folder not found"),
        (["fresh", "--from", "{root}/docs"], r"error: \S+/docs: no timeline found"),
        (
            ["fresh", "--from", "{raw}", "--range", "prefil"],
            r"error: \S+trace_fused\.json\.xz: no range named 'prefil'",
        ),
        (
            ["fresh", "--from", "{raw}", "--hardware", "h999"],
            r"error: --hardware: 'h999' is not a hardware entry of data/hardware/; valid ids: a100-sxm-40gb, ",
        ),
        (["fresh", "--from", "{raw}", "--title", "fr=Bonjour"], r"error: --title 'fr=Bonjour': write LANG=TEXT"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(project, created, args, message):
    args = [a.format(raw=project / "raw", root=project) for a in args]
    out = run("new-report", *args, "--kind", "kernel-profile", "--root", str(project))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert re.match(message, out.stderr), out.stderr
    assert not (project / "data" / "reports" / "fresh").exists()
    assert not (project / "docs" / "en" / "reports" / "fresh.md").exists()


@pytest.fixture(scope="module")
def new_site(project, created, built_site) -> Path:
    """The project's site with the new report, built once for the tests below."""
    assert created.returncode == 0, created.stderr
    out = run(
        "build-site",
        "--config-file",
        str(project / "mkdocs.yml"),
        "--site-dir",
        str(project / "site"),
        "--log-file",
        str(project / "build.log"),
        cwd=project,
        env={"PROFSITE_CACHE_DIR": str(built_site.cache)},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return project / "site"


def test_the_site_builds_with_the_new_report(project, new_site):
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        page = (project / "site" / prefix / "reports" / "decode-copy" / "index.html").read_text(encoding="utf-8")
        main = page.split('<article class="md-content__inner', 1)[1]
        # the hostile title is the heading's text, nothing of it markup or evaluated
        article = main.split("</article>", 1)[0]
        assert _text_of(article, "h1").removesuffix("¶").strip() == TITLES[lang], lang
        # the browser's title too (Material's striptags unescapes it; generators/site/hooks.py):
        # the whole title, escaped, inside the one <title> element
        head_title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
        assert html.unescape(head_title).startswith(TITLES[lang] + " - "), head_title
        rest = page.replace(head_title, "", 1)
        assert "<script>alert" not in rest and "<img src=x" not in rest and 'href="javascript:' not in rest, lang
        # evaluated, "{% if true %}jinja{% endif %}" would leave a bare "jinja": every one is still
        # inside its template text, wherever the page repeats the title
        shown = html.unescape(re.sub(r"<[^>]+>", " ", article))
        assert not re.search(r"(?<!\{% if true %\})jinja", shown), lang
        assert shown.count("jinja") == shown.count("{% if true %}jinja{% endif %}"), lang
        assert len(re.findall(r"<h2", main)) == 15, lang  # the template's sections (parts, timeline too)
        assert main.count("<table") >= 8 and len(re.findall(r'<img [^>]*\.svg"', main)) >= 15
        # nothing of the template's header comment (or any template text) reaches the page
        # (the hostile title's own template text aside, wherever the page shows it)
        text = html.unescape(re.sub(r"<[^>]+>", " ", main)).replace(TITLES[lang], " ")
        for leak in (
            "FACT",
            "new-report",
            "generators/kinds",
            "report=report",
            "#}",
            "{#",
            "-->",
            "__TITLE__",
            "__REPORT__",
        ):
            assert leak not in text, (lang, leak)


def test_nav_gets_a_reports_section_when_it_has_none():
    from generators.commands.new_report import add_to_nav

    text = "site_name: x\n# keep me\nnav:\n  - index.md\n  - Reference:\n      - hardware.md\n\ntheme: {}\n"
    out = add_to_nav(text, "reports/a.md")
    assert "# keep me" in out
    assert yaml.safe_load(out)["nav"] == ["index.md", {"Reference": ["hardware.md"]}, {"Reports": ["reports/a.md"]}]
    again = add_to_nav(out, "reports/b.md")
    assert yaml.safe_load(again)["nav"][-1] == {"Reports": ["reports/a.md", "reports/b.md"]}


@needs_chromium
def test_the_hostile_titles_read_as_text_in_a_browser(new_site):
    """Both languages' pages of the new report in Chromium: the heading reads as the title,
    and nothing of it runs (no alert, no script or img element, no dialog)."""
    site = new_site
    with serve(site) as base_url, chromium() as browser, recording_page(browser, base_url) as page:
        page.add_init_script("window.__ran = []; window.alert = m => window.__ran.push(String(m));")
        for lang, path in (("en", "/reports/decode-copy/"), ("zh", "/zh/reports/decode-copy/")):
            page.goto(base_url + path, wait_until="load")
            heading = " ".join(page.inner_text("article h1").split()).removesuffix("¶").strip()
            assert heading == TITLES[lang], (lang, heading)
            assert page.title().startswith(TITLES[lang] + " - "), (lang, page.title())
            assert page.evaluate("window.__ran") == [], lang
            assert page.locator("article script, article img[src=x]").count() == 0, lang
        assert page.problems == []

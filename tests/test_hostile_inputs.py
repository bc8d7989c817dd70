"""Hostile data files and arguments (issue 17, part 4), checked without building a site.

* URLs from data files become links only when they are http(s) addresses with a host; any
  other (``javascript:``, ``data:``, scheme-relative, with blanks or tabs hiding the scheme)
  is shown as text, in markdown prose and in table cells.
* Every path that a ``report.yml`` names is confined to its report's folder: ``..``, an
  absolute path or a symbolic link leading out is one line, ``error: <file>: <what>``, exit 2.
* A truncated ``.json.xz``, a malformed ``meta.json`` / ``timing.json`` / ``results.json`` and
  an ncu raw page without a required metric are one ``error:`` line naming the file.

The inputs are DERIVED TEST INPUTS: real files of ``data/`` cut, edited or linked in a
temporary folder, as each test says. What the pages make of hostile names, titles and rule
texts, in both languages and in a real browser, is in tests/test_report_escaping.py and
tests/test_new_report.py.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import lzma
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest

from generators.errors import UserError, about
from generators.pieces import Cell, Column, Row, Table
from generators.render import tables
from generators.site.ids import PageScope
from generators.site.publish import table_html
from tests.site_fixtures import run_cli

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "data"
DECODE = "decode-h100-80gb-hbm3"
DECODE_V1 = DATA / "reports" / DECODE / "v1"
ONE_ERROR = re.compile(r"error: (?P<file>[^:]+): (?P<what>.+)\n")


class _Links(HTMLParser):
    """Every ``href`` of an ``<a>`` and every element's name, from a fragment of HTML."""

    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.text = ""
        self.link_texts: list[str] = []
        self.in_link = False
        self.feed(fragment)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
            self.link_texts.append("")
            self.in_link = True

    def handle_endtag(self, tag):
        self.in_link = self.in_link and tag != "a"

    def handle_data(self, data):
        self.text += data
        if self.in_link:
            self.link_texts[-1] += data


HOSTILE_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " \tjavascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "\x01javascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "//evil.example/x",
    "/relative/path",
    "https:///no-host",
    "http://[::1",  # not a URL at all (an unclosed IPv6 host)
]


@pytest.mark.parametrize("url", HOSTILE_URLS, ids=repr)
def test_a_url_that_is_not_http_is_text_in_prose_and_in_tables(url):
    label = "NVIDIA H100 Datasheet"
    prose = markdown.markdown(tables.link(label, url))  # Python-Markdown, as the site renders prose
    seen = _Links(prose)
    assert seen.hrefs == [], prose
    assert label in seen.text
    cell = Cell(label, label, "link", url)
    html = table_html(Table("t", (Column("k", "Source", "Source"),), (Row("r", (cell,)),)), "u", PageScope("hardware"))
    seen = _Links(html)
    assert seen.hrefs == [] and label in seen.text, html


@pytest.mark.parametrize(
    "url",
    [
        "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper",  # as data/ writes them
        'https://x.example/a b?q=<1>&r="2"#f',
        "https://x.example/>)<script>alert(1)</script>",
        "HTTP://X.example/",
    ],
    ids=repr,
)
def test_an_http_url_is_one_link_that_cannot_break_out_of_its_markup(url):
    label = "a source"
    for html in (
        markdown.markdown(tables.link(label, url)),
        table_html(
            Table("t", (Column("k", "Source", "Source"),), (Row("r", (Cell(label, label, "link", url),)),)),
            "u",
            PageScope("hardware"),
        ),
    ):
        seen = _Links(html)
        assert len(seen.hrefs) == 1, html
        assert seen.hrefs[0].lower().startswith(("http://", "https://")), seen.hrefs
        assert "script" not in seen.tags and seen.link_texts == [label], html
        # nothing but the percent-encoding changed: decoding it gives the address back
        assert re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), seen.hrefs[0]) == url.replace(
            "HTTP:", "http:"
        )


def test_every_url_of_the_data_files_stays_a_link_as_written():
    """The restriction drops nothing real: each URL in data/ (read with PyYAML) is kept byte for byte."""
    import yaml

    def urls(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from [value] if key == "url" else urls(value)
        elif isinstance(node, list):
            for value in node:
                yield from urls(value)

    found = [u for f in sorted(DATA.rglob("*.yml")) for u in urls(yaml.safe_load(f.read_text(encoding="utf-8")))]
    assert len(found) >= 10
    assert [u for u in found if tables.safe_url(u) != u] == []


# -- paths from report.yml ----------------------------------------------------------------------


@pytest.fixture
def data_copy(tmp_path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    return data


def _decode_model(data: Path, step: str):
    """The decode report's v1 through its kind's model, as the build asks for it: ``inputs``
    (the files it reads, for the cache key) or ``compute``."""
    from generators.catalog import Catalog
    from generators.kinds.kernel_profile import model

    return getattr(model, step)(Catalog(data, ("en", "zh")), {"report": DECODE, "version": "v1"})


def _edit_config(data: Path, old: str, new: str) -> Path:
    """DERIVED: the decode report's real report.yml with one line changed."""
    path = data / "reports" / DECODE / "report.yml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _one_error(out) -> re.Match:
    assert out.returncode == 2, (out.returncode, out.stdout[-500:], out.stderr[-2000:])
    assert "Traceback" not in out.stderr and out.stdout == ""
    match = ONE_ERROR.fullmatch(out.stderr)
    assert match, out.stderr
    return match


@pytest.mark.slow
@pytest.mark.parametrize(
    "old, new, field",
    [
        ("timeline: trace_fused.json.xz", "timeline: ../../../hardware/h100-sxm.yml", "timeline"),
        (
            "timeline: trace_fused.json.xz",
            "timeline: v1/../../decode-h100-80gb-hbm3/v1/trace_fused.json.xz",
            "timeline",
        ),
        ("metrics: ncu_fused_raw.csv.gz", "metrics: /etc/passwd", "metrics"),
        ("metrics: ncu_fused_raw.csv.gz", "metrics: ''", "metrics"),
    ],
    ids=["dot-dot", "dot-dot-inside", "absolute", "empty"],
)
def test_a_path_out_of_the_report_folder_in_report_yml_is_one_line(data_copy, tmp_path, old, new, field):
    config = _edit_config(data_copy, old, new)
    out = run_cli("diff", DECODE, "v1", "v2", data=data_copy, cache=tmp_path / "cache")
    match = _one_error(out)
    assert Path(match["file"]) == config
    assert match["what"].startswith(f"variants.fused.{field}: ") and "inside the version folder" in match["what"]


def test_a_symbolic_link_out_of_the_report_folder_is_one_line(data_copy, tmp_path):
    """DERIVED: the decode report's v1 with its trace replaced by a link to a copy outside data/."""
    outside = tmp_path / "outside"
    outside.mkdir()
    trace = data_copy / "reports" / DECODE / "v1" / "trace_fused.json.xz"
    shutil.move(trace, outside / trace.name)
    trace.symlink_to(outside / trace.name)
    with pytest.raises(UserError) as caught:
        _decode_model(data_copy, "inputs")
    assert caught.value.line() == (
        f"error: {trace}: a symbolic link leads outside the report folder data/reports/{DECODE}"
    )


def test_links_are_followed_only_as_far_as_the_report_folder(tmp_path):
    """The catalog's own check, on a made-up layout of links (no profiler data involved)."""
    from generators.catalog import Catalog, ReportRef

    data = tmp_path / "data"
    v1, v2 = data / "reports" / "r" / "v1", data / "reports" / "r" / "v2"
    v1.mkdir(parents=True)
    v2.mkdir()
    (v1 / "a.json").write_text("{}")
    (tmp_path / "secret").mkdir()
    (v2 / "a.json").symlink_to("../v1/a.json")  # another version of the same report: allowed
    (v2 / "sub").symlink_to(tmp_path / "secret")  # a folder on the way leads out
    (v2 / "up").symlink_to("../../../..")
    cat = Catalog(data)
    ref = ReportRef("r", "v2")
    assert cat.file(ref, "a.json") == v2 / "a.json"
    for name in ("sub/x.json", "up/etc/passwd"):
        with pytest.raises(UserError, match="a symbolic link leads outside the report folder data/reports/r"):
            cat.file(ref, name)
    for name in ("../v1/a.json", "/etc/passwd", ""):
        with pytest.raises(UserError, match="not a path inside the version folder"):
            cat.file(ref, name)
    with pytest.raises(UserError, match="unknown report"):
        cat.versions("..")


@pytest.mark.parametrize(
    "report, old, new, field",
    [
        ("ddp-h200-x2", "- rank1.pt.trace.json.xz", "- ../../ddp-h200-x2/v1/rank1.pt.trace.json.xz", "traces[1]"),
        ("sweep-h100-80gb-hbm3", "results: results.json", "results: /tmp/results.json", "results"),
    ],
)
def test_the_other_kinds_confine_their_paths_too(tmp_path, report, old, new, field):
    """DERIVED: the ddp and sweep reports' real report.yml with one path changed, read as the build reads it."""
    from generators.kinds import CONFIG_UNION
    from generators.readers import report_config

    text = (DATA / "reports" / report / "report.yml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "report.yml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        report_config.read(path, CONFIG_UNION)
    line = caught.value.line()
    assert line.startswith(f"error: {path}: ") and field in line and "inside the version folder" in line, line


# -- malformed files ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_truncated_trace_is_one_line(tmp_path):
    """DERIVED: the real decode trace cut in half (the xz stream ends early), and the same
    JSON cut in half then compressed again (the xz stream is whole, the JSON is not)."""
    real = (DECODE_V1 / "trace_fused.json.xz").read_bytes()
    cut = tmp_path / "cut_stream.json.xz"
    cut.write_bytes(real[: len(real) // 2])
    cut_json = tmp_path / "cut_json.json.xz"
    cut_json.write_bytes(lzma.compress(lzma.decompress(real)[:200_000], preset=0))
    for path, what in ((cut, "truncated xz file"), (cut_json, "not valid JSON")):
        out = run_cli("kernels", str(path))
        match = _one_error(out)
        assert Path(match["file"]) == path and what in match["what"], out.stderr


def _cut(text: str) -> str:
    return text[: len(text) // 2]


def _wrong_type(text: str) -> str:
    doc = json.loads(text)
    key = sorted(doc)[0]
    doc[key] = {"not": ["what", "the", "reader", "expects"]}
    return json.dumps(doc)


MALFORMED = {
    # file of the decode report's v1 (or another report's) -> its reader
    "meta.json": (DECODE_V1 / "meta.json", "generators.readers.capture_meta:read_meta"),
    "timing.json": (DECODE_V1 / "timing.json", "generators.readers.capture_meta:read_timing"),
    "ncu_run.json": (DECODE_V1 / "ncu_run.json", "generators.readers.capture_meta:read_ncu_runs"),
    "sweep results.json": (
        DATA / "reports/sweep-h100-80gb-hbm3/v1/results.json",
        "generators.readers.sweep_results:read",
    ),
    "microbench results.json": (
        DATA / "reports/microbench-h100-80gb-hbm3/v1/results.json",
        "generators.readers.microbench:read",
    ),
}
EDITS = {
    "cut in half": (_cut, "not valid JSON"),
    "an array": (lambda t: "[]", "Expected `object`, got `array`"),
    "empty": (lambda t: "", "not valid JSON"),
    "binary": (lambda t: "\x00\x89PNG", "not valid JSON"),
    "a field of the wrong type": (_wrong_type, "- at `$"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_json_file_is_one_line_naming_it(tmp_path, name, edit):
    """DERIVED: each real JSON file of a capture, edited as the case says."""
    import importlib

    source, reader = MALFORMED[name]
    module, func = reader.split(":")
    read = getattr(importlib.import_module(module), func)
    change, expected = EDITS[edit]
    path = tmp_path / source.name
    path.write_text(change(source.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        read(path)
    line = caught.value.line()
    assert line.startswith(f"error: {path}: ") and expected in line and "\n" not in line, line


def _raw_without(metric: str, source: Path, dest: Path) -> Path:
    """DERIVED: the real ncu raw page with the column of ``metric`` removed (csv module only)."""
    rows = list(csv.reader(io.StringIO(gzip.decompress(source.read_bytes()).decode("utf-8"))))
    header = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    col = rows[header].index(metric)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow(row[:col] + row[col + 1 :] if len(row) > col else row)
    dest.write_bytes(gzip.compress(out.getvalue().encode("utf-8"), mtime=0))
    return dest


def test_an_ncu_raw_page_missing_a_required_metric_is_one_line(tmp_path):
    from generators.analysis.ncu_metrics import launch_table, required_metrics
    from generators.readers import ncu_csv

    metric = required_metrics()[-1]
    path = _raw_without(metric, DECODE_V1 / "ncu_fused_raw.csv.gz", tmp_path / "ncu_fused_raw.csv.gz")
    report = ncu_csv.read(path)  # still a well-formed raw page
    assert metric not in set(report.metrics["metric"]) and len(report.kernels) > 0
    with pytest.raises(UserError) as caught, about(path):
        launch_table(report)
    line = caught.value.line()
    assert line.startswith(f"error: {path}: the raw page lacks metric {metric} (1 missing)"), line


@pytest.mark.slow
def test_an_ncu_raw_page_missing_a_metric_fails_the_report_with_one_line(data_copy):
    """Through the report's model, as the build computes it, on a copy of data/
    whose decode v1 has the DERIVED raw page without the first required metric."""
    from generators.analysis.ncu_metrics import required_metrics

    metric = required_metrics()[0]
    path = data_copy / "reports" / DECODE / "v1" / "ncu_fused_raw.csv.gz"
    _raw_without(metric, DECODE_V1 / path.name, path)
    with pytest.raises(UserError) as caught:
        _decode_model(data_copy, "compute")
    line = caught.value.line()
    assert line.startswith(f"error: {path}: the raw page lacks metric {metric} "), line

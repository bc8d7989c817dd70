"""One quantity, one number (issue 24, item 4): a quantity that two pages state agrees, or is
shown as a different method.

``data/quantities.yml`` lists each quantity and the facts that state it. The test computes
every place from the session build's cache (the built site's facts) and compares the values
with a plain relative difference. A quantity marked ``open`` is a disagreement known today:
it is printed, not failed, until the places agree - then ``open`` must go.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generators.cache import ResultCache
from generators.catalog import Catalog
from generators.sections import MODELS
from generators.sections.runner import Runner
from tests import project

REGISTRY = project.ROOT / "data" / "quantities.yml"


def registry() -> dict:
    return yaml.safe_load(REGISTRY.read_text(encoding="utf-8"))["quantities"]


def disagreements(quantity: dict, value_of) -> list[str]:
    """Why the places of ``quantity`` do not agree (none: they do). ``value_of(place)``: its value."""
    groups: dict[str, list[tuple[dict, float]]] = {}
    for place in quantity["places"]:
        groups.setdefault(place.get("method", ""), []).append((place, value_of(place)))
    out = []
    for method, places in groups.items():
        values = [v for _, v in places]
        spread = (max(values) - min(values)) / max(abs(v) for v in values) if any(values) else 0.0
        if spread > quantity.get("tolerance", 0.0):
            shown = "; ".join(f"{p['page']} ({p['model']}: {p['fact']}) {v:.6g}" for p, v in places)
            out.append(f"{method or 'one method'}: {shown} differ by {spread:.1%}")
    return out


def facts_runner(cache: Path) -> Runner:
    settings = project.settings()
    return Runner(settings, Catalog(settings.data_dir, settings.codes), ResultCache(cache))


def value_from(runner: Runner):
    def value_of(place: dict) -> float:
        options = {"report": place["report"]} if "report" in place else {}
        return float(runner.fact(MODELS[place["model"]], place["fact"], options).value)

    return value_of


def test_the_registry_names_real_facts_with_their_units():
    quantities = registry()
    assert {"h100-dram-bandwidth", "h100-decode-wall-per-token", "h100-sm-clock"} <= set(quantities)
    for name, q in quantities.items():
        assert q["places"], name
        for place in q["places"]:
            assert place["model"] in MODELS, (name, place)
            assert MODELS[place["model"]].per_report == ("report" in place), (name, place)


def test_disagreement_is_found_and_labelled_methods_are_not_compared():
    q = {
        "tolerance": 0.02,
        "places": [{"page": "a", "model": "m", "fact": "x"}, {"page": "b", "model": "m", "fact": "y"}],
    }
    values = {"x": 3.02e12, "y": 2.60e12}
    (found,) = disagreements(q, lambda p: values[p["fact"]])
    assert "a (m: x) 3.02e+12; b (m: y) 2.6e+12 differ by 13.9%" in found
    q["places"][1]["method"] = "read-only stream"
    assert disagreements(q, lambda p: values[p["fact"]]) == []
    values["y"] = 3.00e12
    del q["places"][1]["method"]
    assert disagreements(q, lambda p: values[p["fact"]]) == []


@pytest.mark.site
def test_every_quantity_stated_twice_agrees_or_is_labelled(built_site, capsys):
    value_of = value_from(facts_runner(built_site.cache))
    failures = []
    for name, quantity in registry().items():
        found = disagreements(quantity, value_of)
        if quantity.get("open"):
            if not found:
                failures.append(f"{name}: the places agree now; take `open` off in data/quantities.yml")
            for line in found:
                print(f"open: {name}: {line} ({' '.join(quantity['open'].split())})")
            continue
        failures += [f"{name}: {line}" for line in found]
    assert failures == []

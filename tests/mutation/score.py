"""`make mutation`'s summary: the score of the last `mutmut run` and its surviving mutants.

Reads ``mutmut results --all true`` (mutmut keeps no machine-readable summary of its own) and
prints the score, then each survivor, marked with whether tests/mutation/SURVIVORS.md explains
it. Exit 1 when the score is below the target or a survivor is not explained.

Score: detected ÷ mutants run, where detected = killed (a test failed) + timeout (the tests ran
past mutmut's limit: a mutant that loops, or a failing Hypothesis test still shrinking), as
Stryker and mutmut count them; the killed-only share is printed beside it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

TARGET = 0.90
EXPLAINED = Path(__file__).with_name("SURVIVORS.md")


def main() -> int:
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], capture_output=True, text=True, check=True
    ).stdout
    status = dict(re.findall(r"^\s*(\S+): (.+?)\s*$", out, re.M))
    counts = Counter(status.values())
    killed = counts["killed"]
    detected = killed + counts["timeout"]
    scored = detected + counts["survived"] + counts["no tests"] + counts["suspicious"]
    explained = set(re.findall(r"`(generators\.\S+__mutmut_\d+)`", EXPLAINED.read_text(encoding="utf-8")))
    left = sorted(name for name, s in status.items() if s not in ("killed", "timeout", "skipped", "not checked"))
    unexplained = [n for n in left if n not in explained]
    print(f"mutants: {len(status)}; " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    print(
        f"mutation score: {detected}/{scored} detected = {detected / scored:.1%} (target {TARGET:.0%}); "
        f"killed by a failing test alone: {killed}/{scored} = {killed / scored:.1%}"
    )
    for name in left:
        print(f"  {status[name]:9} {name}{'' if name in explained else '   <- not explained in SURVIVORS.md'}")
    if counts["not checked"]:
        print(f"{counts['not checked']} mutants not checked: the run did not finish")
    return 0 if scored and detected / scored >= TARGET and not unexplained and not counts["not checked"] else 1


if __name__ == "__main__":
    sys.exit(main())

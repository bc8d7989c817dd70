"""Command-line interface: ``profsite <command> ...`` (or ``python -m generators <command> ...``).

The project a command works on (its ``mkdocs.yml``, ``data/``, ``docs/``) is found by walking up
from the current folder to the first ``mkdocs.yml`` (:func:`project_root`), or named with
``--root DIR`` before the command; a command's own ``--root``/``--config-file`` still wins.

Each command lives in its own module and is imported only when used, so that
``--help`` is quick and a missing optional dependency affects only its command.
A ``UserError`` becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from generators.errors import UserError

# command name -> module with add_arguments(parser) and run(args) -> int
COMMANDS = {
    "kernels": "generators.commands.kernels",
    "ncu": "generators.commands.ncu",
    "build-site": "generators.commands.build_site",
    "new-report": "generators.commands.new_report",
    "messages": "generators.commands.messages",
    "check-parity": "generators.commands.check_parity",
    "check-literals": "generators.commands.check_literals",
    "check-typography": "generators.commands.check_typography",
    "check-claims": "generators.commands.check_claims",
    "roofline": "generators.commands.roofline",
    "review": "generators.commands.review",
    "review-check": "generators.commands.review_check",
    "sweep": "generators.commands.sweep",
    "diff": "generators.commands.diff",
    "compare": "generators.commands.compare",
    "new-version": "generators.commands.new_version",
    "parts": "generators.commands.parts",
}


PACKAGE_ROOT = Path(__file__).resolve().parent.parent
ROOT_ENV = "PROFSITE_ROOT"


def project_root() -> Path:
    """The project's folder: ``$PROFSITE_ROOT`` (``--root``), else the first folder from the
    current one up that holds a ``mkdocs.yml``, else the checkout this package lives in."""
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV])
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "mkdocs.yml").is_file():
            return folder
    return PACKAGE_ROOT


def _take_root(args: list[str]) -> list[str]:
    """``--root DIR`` before the command: the project (checked), for every command of this run."""
    if args[:1] == ["--root"] or (args and args[0].startswith("--root=")):
        value, rest = (args[1] if len(args) > 1 else "", args[2:]) if args[0] == "--root" else (args[0][7:], args[1:])
        root = Path(value).resolve()
        if not (root / "mkdocs.yml").is_file():
            raise UserError(value or None, "--root: not a project folder (no mkdocs.yml)")
        os.environ[ROOT_ENV] = str(root)
        return rest
    return args


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of command ``only`` (its module alone is imported: a
    site build does not pay for the imports of the other commands)."""
    parser = argparse.ArgumentParser(prog="profsite", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a command whose module is not written yet
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _take_root(args)
    except UserError as exc:
        print(exc.line(), file=sys.stderr)
        return exc.exit_code
    parser = build_parser(args[0] if args and args[0] in COMMANDS else None)
    args = parser.parse_args(args)
    try:
        return int(args._module.run(args) or 0)
    except UserError as exc:
        print(exc.line(), file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        return 0

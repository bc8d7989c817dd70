"""Command-line interface: ``python -m generators <command> ...``.

Each command lives in its own module and is imported only when used, so that
``--help`` is quick and a missing optional dependency affects only its command.
A ``UserError`` becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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
    "new-version": "generators.commands.new_version",
    "parts": "generators.commands.parts",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of command ``only`` (its module alone is imported: a
    site build does not pay for the imports of the other commands)."""
    parser = argparse.ArgumentParser(prog="python -m generators", description=__doc__.splitlines()[0])
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
    args = sys.argv[1:] if argv is None else argv
    parser = build_parser(args[0] if args and args[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args._module.run(args) or 0)
    except UserError as exc:
        print(exc.line(), file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        return 0

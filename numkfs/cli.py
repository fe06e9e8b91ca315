"""The ``numkfs`` command line (also ``python -m numkfs``)."""
from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


class CLIError(Exception):
    """One clear line for the user, exit status 2."""


def _cmd_solvers(args) -> int:
    from . import solvers

    rows = solvers.available_solvers(check=True)
    heads = ["solver", "method", "version", "installed", "works"]
    table = [[r["name"], r["method"], r["version"], "yes" if r["installed"] else f"no ({r['install']})",
              {True: "yes", False: "NO", None: "-"}[r["works"]]] for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths)))
    print("  ".join("-" * w for w in widths))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    return 0 if all(r["works"] is not False for r in rows if r["installed"]) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="numkfs", description="Feature selection in non-linear kernel models.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("solvers", help="list the solver backends, their versions and whether they work")
    p.set_defaults(func=_cmd_solvers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CLIError as exc:
        print(f"numkfs: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

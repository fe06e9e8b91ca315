"""Where verbose messages and progress bars go: one callback owned up here.

Code below the estimators (``methods/``, ``solvers/``, ``kernels/``) never
prints and never draws a bar itself.  With ``verbose=True`` it calls
:func:`report`, and a long loop asks :func:`progress_bar` for a bar.  What
happens to them is decided here, by whoever sets the callback:
:func:`numkfs.model_selection.show_progress` and the command line.

By default a message goes to the ``numkfs`` logger at level INFO and, since
the caller asked for ``verbose=True``, also to standard error, so that it is
seen without configuring logging.  :func:`set_reporter` replaces that (a
notebook may collect the messages in a list; a test may capture them).
"""
from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator

__all__ = ["progress_bar", "report", "reporting_to", "set_reporter"]

_LOGGER = logging.getLogger("numkfs")


def _default_reporter(source: str, message: str) -> None:
    _LOGGER.info("[%s] %s", source, message)
    sys.stderr.write(f"[{source}] {message}\n")


_STATE: dict[str, Callable[[str, str], None] | None] = {"reporter": _default_reporter}


def report(source: str, message: str) -> None:
    """Pass one verbose message to the current reporter.

    Parameters
    ----------
    source : str
        Who speaks, e.g. ``"nmmkl"`` or ``"l1kr"``.
    message : str
        The message, one line.
    """
    reporter = _STATE["reporter"]
    if reporter is not None:
        reporter(source, message)


def set_reporter(reporter: Callable[[str, str], None] | None):
    """Replace the reporter of verbose messages; returns the previous one.

    Parameters
    ----------
    reporter : callable or None
        ``reporter(source, message)``; None silences verbose messages.

    Returns
    -------
    callable or None
        The reporter it replaced (pass it back to restore it).
    """
    old = _STATE["reporter"]
    _STATE["reporter"] = reporter
    return old


@contextlib.contextmanager
def reporting_to(reporter: Callable[[str, str], None] | None) -> Iterator[None]:
    """Within this block verbose messages go to ``reporter`` (None: nowhere).

    Parameters
    ----------
    reporter : callable or None
        ``reporter(source, message)``.

    Yields
    ------
    None
    """
    old = set_reporter(reporter)
    try:
        yield
    finally:
        set_reporter(old)


class _NoBar:
    """The bar when none is shown: ``update`` and ``close`` do nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, *, desc: str, unit: str, show: bool = True):
    """A progress bar (tqdm, on standard error) or an object that ignores updates.

    Parameters
    ----------
    total : int
        Number of steps.
    desc : str
        Label shown before the bar.
    unit : str
        Name of one step.
    show : bool, default=True
        False gives the silent bar.

    Returns
    -------
    object
        Has ``update(n=1)`` and ``close()``.
    """
    if not show:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)

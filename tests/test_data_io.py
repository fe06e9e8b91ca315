"""Reading tables (``numkfs._data_io``): fuzzed CSV files are read or refused in one
line, never with a traceback, in process and through the command line."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np


# --------------------------------------------------------------------------
# fuzzed CSV files through the CLI: a result, or one line on stderr and status 2


_CELLS = ["1", "2.5", "-3", "0", "", "NA", "nan", "inf", "x", "1e400", " 7 ", "\"4\"", "a,b", "TRUE", "1e-300",
          "NULL", "?", "0x1F", "١", "\t"]


def _fuzz_csv(rng):
    n_cols = int(rng.integers(1, 6))
    if rng.random() < 0.6:  # a well-formed header, else names drawn with repeats and blanks
        header = ["a", "b", "c d", "ä", "y"][-n_cols:]
    else:
        header = [str(rng.choice(["a", "b", "y", "", "y", "c d", "ä"])) for _ in range(n_cols)]
    lines = [",".join(header)]
    for _ in range(int(rng.integers(0, 16))):
        k = n_cols if rng.random() < 0.9 else int(rng.integers(0, n_cols + 2))
        if rng.random() < 0.85:
            row = [f"{rng.standard_normal():.3f}" for _ in range(k)]
        else:
            row = [str(rng.choice(_CELLS)) for _ in range(k)]
        lines.append(",".join(row))
    if rng.random() < 0.2:
        lines.insert(1, "")
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


def test_fuzzed_csv_files_one_line_errors_never_tracebacks(tmp_path):
    from numkfs._data_io import DataError, read_table

    rng = np.random.default_rng(19)
    outcomes = {"read": 0, "refused": 0}
    for i in range(300):
        f = tmp_path / f"f{i}.csv"
        f.write_text(_fuzz_csv(rng), encoding="utf-8")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                X, y, names, target, _ = read_table(str(f))
        except DataError as exc:
            msg = str(exc)
            assert msg and "\n" not in msg, msg
            outcomes["refused"] += 1
            continue
        assert X.ndim == 2 and X.shape[0] == len(y) >= 2 and X.shape[1] == len(names) >= 1
        assert not np.isnan(X).any() and target not in names and len(set(names)) == len(names)
        if y.dtype.kind == "f":
            assert not np.isnan(y).any()  # missing cells dropped; "inf" kept, to be refused by name
        outcomes["read"] += 1
    assert outcomes["read"] > 10 and outcomes["refused"] > 50, outcomes


def test_fuzzed_csv_through_the_cli_subprocess(tmp_path):
    # a few fuzzed files through the real command: status 0, or status 2 with one stderr line
    rng = np.random.default_rng(7)
    files = []
    for i in range(6):
        f = tmp_path / f"g{i}.csv"
        f.write_text(_fuzz_csv(rng), encoding="utf-8")
        files.append(str(f))
    script = ("import sys, warnings\nwarnings.simplefilter('ignore')\nfrom numkfs.cli import main\n"
              "import contextlib, io\n"
              "for f in sys.argv[1:]:\n"
              "    err = io.StringIO()\n"
              "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):\n"
              "        rc = main(['select', f, '--method', 'garrote', '--cv', '2', '-q'])\n"
              "    print(rc, repr(err.getvalue()))\n")
    out = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    for line in out.stdout.splitlines():
        rc, err = line.split(" ", 1)
        err = eval(err)  # noqa: S307 - our own repr
        assert (rc == "0" and err == "") or (rc == "2" and err.startswith("numkfs: error: ")
                                             and err.count("\n") == 1), line

"""The CLI frame: Ctrl-C at any moment is one line and exit 130; help lists a command's own options first.

SIGINT is sent to a real ``python -m ccrawl`` process at several moments, from right after
the entry module has been imported (the child runs with ``-X importtime``, whose stderr line
for ``ccrawl._entry`` says when the handler is in place; the interpreter's own start before
that is Python's) through the imports of click and the command, into the running command
(``parse --markdown -`` waiting on its stdin).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccrawl.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _help(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main([*args, "--help"]) == 0
    return capsys.readouterr().out


def _sections(text: str) -> dict[str, str]:
    """Each "Heading:" line of a help text and the lines under it."""
    out: dict[str, str] = {}
    current = ""
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            out[current] = ""
        elif current:
            out[current] += line + "\n"
    return out


@pytest.mark.parametrize(
    ("args", "own", "not_own"),
    [
        (["url", "shard"], ["--shards", "--shard", "--help"], ["--source", "--global-rate", "--no-cache"]),
        (["parse"], ["--markdown", "--text", "--links", "--help"], ["--source", "--crawl", "--output"]),
    ],
)
def test_help_lists_own_options_first_and_the_shared_ones_under_their_heading(
    capsys: pytest.CaptureFixture[str], args: list[str], own: list[str], not_own: list[str]
) -> None:
    text = _help(capsys, args)
    assert text.index("\nOptions:") < text.index("\nGlobal options:")
    sections = _sections(text)
    for flag in own:
        assert flag in sections["Options"], f"{flag} is not among {args}'s own options"
        assert flag + " " not in sections["Global options"]
    for flag in not_own:
        assert flag not in sections["Options"], f"{flag} is listed as {args}'s own option"
        assert flag in sections["Global options"]


def _session_alive(sid: int) -> list[int]:
    """Processes still in session ``sid`` (the child was started as its leader)."""
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # fields: state ppid pgrp session
            left.append(int(entry))
    return left


def _interrupt_after(delay: float) -> tuple[int, list[str], int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "ccrawl", "parse", "--markdown", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the entry module (and so the handler) is in place
        line = proc.stderr.readline().decode()
        lines.append(line)
        if "ccrawl._entry" in line or not line:
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=30)
    text = [ln for ln in (*lines, *rest.decode().splitlines()) if ln.strip() and not ln.startswith("import time:")]
    return proc.returncode, text, proc.pid


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.02, 0.05, 0.15, 1.5])
def test_ctrl_c_at_any_moment_exits_130_with_one_line(delay: float) -> None:
    code, lines, pid = _interrupt_after(delay)
    assert code == 130, (delay, lines)
    assert lines == ["ccrawl: interrupted"], lines
    assert not _session_alive(pid)


def test_interrupt_handled_inside_a_string_exec_still_exits_130_under_python_m(tmp_path: Path) -> None:
    """A Ctrl-C that surfaced from an ``exec`` (as during a dataclass's creation) and was handled
    must leave ``python -m ccrawl`` with 130, not a death by SIGINT."""
    (tmp_path / "entry_probe.py").write_text(
        "import ccrawl._entry as entry\n"
        "from ccrawl.sigint import EXIT_INTERRUPTED\n"
        "def fake_main():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        return EXIT_INTERRUPTED\n"
        "    return 0\n"
        "entry.main = fake_main\n"
        "entry.run()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def default_sigint() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.run(
        [sys.executable, "-m", "entry_probe"], cwd=tmp_path, env=env, preexec_fn=default_sigint, timeout=60
    )
    assert proc.returncode == 130


def _blas_threads_seen_by_a_command(env: dict[str, str]) -> str:
    # The CLI's first module, imported the way the console script and `python -m ccrawl` import it.
    code = "import os, ccrawl._entry; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_cli_holds_numpys_idle_blas_threads_to_one_unless_the_user_sets_them() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _blas_threads_seen_by_a_command(env) == "1"
    assert _blas_threads_seen_by_a_command({**env, "OPENBLAS_NUM_THREADS": "4"}) == "4"

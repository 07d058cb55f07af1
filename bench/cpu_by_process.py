"""CPU seconds of every process of a command's tree, and of the nginx workers beside it.

    python bench/cpu_by_process.py -- python -m ccrawl recrawl run --from W --column url --out O ...

Samples ``/proc/PID/stat`` of the command and its descendants every 0.1 s and prints each
process's last user+system CPU with its command line (the run's own summary lines first), then
the CPU the nginx worker processes used meanwhile. Linux only. It answers "where did the cores
go" for a run whose processes share two cores with the server it fetches from.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

_HZ = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[float, int] | None:
    """(user+system seconds, parent pid) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _HZ, int(fields[1])


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            children.setdefault(st[1], []).append(int(entry))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:100]
    except OSError:
        return "?"


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: python bench/cpu_by_process.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    found = subprocess.run(["pgrep", "-f", "nginx: worker"], capture_output=True, text=True).stdout.split()
    nginx = {int(p): st[0] for p in found if (st := _stat(int(p))) is not None}
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    last: dict[int, float] = {}
    names: dict[int, str] = {}
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            st = _stat(pid)
            if st is not None:
                last[pid] = st[0]
                names.setdefault(pid, _cmdline(pid))
        time.sleep(0.1)
    wall = time.monotonic() - started
    assert proc.stdout is not None
    for line in proc.stdout.read().splitlines():
        if line.startswith(("recrawl:", "timing:", "writers", "extract pool")):
            print(line)
    print(f"wall {wall:.2f} s, exit {proc.returncode}")
    for pid, seconds in last.items():
        print(f"{pid:>8} {seconds:7.2f} s  {names[pid]}")
    print(f"{'total':>8} {sum(last.values()):7.2f} s  (the command's tree)")
    for pid, before in nginx.items():
        st = _stat(pid)
        if st is not None:
            print(f"{pid:>8} {st[0] - before:7.2f} s  nginx worker")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())

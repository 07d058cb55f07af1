"""CPU-seconds a command's whole process tree used, per kind of process (a Ray cluster's daemons included).

    python bench/tree_cpu.py python -m ccrawl -c CC-MAIN-2099-51 markdown export --push=false \\
        --shards 0-15 --out /tmp/md --workers 0 --parallel 2 --executor ray

On a machine shared with other jobs wall-clock ratios swing (bench/README.md, "Ray executor retaken"); the
CPU a run costs moves much less. ``/usr/bin/time`` cannot give it for Ray: the workers are the raylet's
children, not reaped through the command. So ``/proc`` is polled every 50 ms and each process's last
utime + stime is kept (a process's final 50 ms can be missed). Prints one JSON line; the command's stderr
goes to ``--stderr``.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def snapshot() -> dict[int, tuple[int, float, str]]:
    """pid -> (ppid, CPU-seconds, command line or name) for every process."""
    out: dict[int, tuple[int, float, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                args = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        # a zombie (or a process mid-exec) has no command line: "[comm]", which keeps the name seen before
        out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, args or f"[{name}]")
    return out


def descendants(root: int, procs: dict[int, tuple[int, float, str]]) -> list[int]:
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (ppid, _, _) in procs.items():
        children[ppid].append(pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        if pid in procs:
            found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def kind(args: str) -> str:
    """``ray::build_in_task``, ``raylet``, ``-m ccrawl``, ``ray/dashboard/dashboard.py`` ..."""
    head = args.split()
    if args.startswith("ray::"):
        return head[0]
    if "python" in head[0].rsplit("/", 1)[-1]:
        rest = [a for a in head[1:] if a not in ("-u", "-B")]
        script = rest[0] if rest else head[0]
        if script == "-m" and len(rest) > 1:
            return f"-m {rest[1]}"
        return script.split("site-packages/")[-1] if "site-packages/" in script else script
    return head[0].rsplit("/", 1)[-1]


def main() -> None:
    argv = sys.argv[1:]
    err_path = "/dev/null"
    if argv[:1] == ["--stderr"]:
        err_path, argv = argv[1], argv[2:]
    started = time.perf_counter()
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        seen: dict[int, tuple[float, str]] = {}
        while proc.poll() is None:
            procs = snapshot()
            for pid in descendants(proc.pid, procs):
                _, cpu, args = procs[pid]
                name = seen.get(pid, (0.0, args))[1] if args.startswith("[") or not args else args
                # a Ray worker renames itself per task (ray::IDLE, ray::build_in_task): keep the busiest name
                if pid in seen and seen[pid][1].startswith("ray::") and args == "ray::IDLE":
                    name = seen[pid][1]
                seen[pid] = (cpu, name)
            time.sleep(0.05)
    kinds: collections.Counter[str] = collections.Counter()
    for cpu, args in seen.values():
        kinds[kind(args)] += cpu
    print(json.dumps({"wall_s": round(time.perf_counter() - started, 2), "rc": proc.returncode,
                      "cpu_s": round(sum(kinds.values()), 2),
                      "by_kind": {k: round(v, 2) for k, v in kinds.most_common()}}))


if __name__ == "__main__":
    main()

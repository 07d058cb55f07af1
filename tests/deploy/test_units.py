"""The systemd units of deploy/ agree with the env example and with the CLI they start."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import click
import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
EXAMPLE = DEPLOY / "recrawl.env.example"
#: Read by ccrawl itself from the environment rather than by a unit line.
PROCESS_ENV = {"HF_TOKEN", "HF_ENDPOINT"}
#: Which CLI command each unit starts.
COMMANDS = {
    "ccrawl-recrawl-run@.service": ("recrawl", "run", "ccrawl.cli.recrawl_run:run"),
    "ccrawl-recrawl-publish@.service": ("recrawl", "publish", "ccrawl.cli.publish:publish"),
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> values, with backslash continuations joined and comments dropped."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith(("#", ";"))):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def parse_env(path: Path) -> dict[str, str]:
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def used_vars(unit: dict[str, dict[str, list[str]]]) -> set[str]:
    found = set()
    for section in unit.values():
        for values in section.values():
            for v in values:
                found.update(a or b for a, b in _VAR.findall(v))
    return found


def test_there_is_a_unit_for_the_crawl_and_one_for_the_publisher() -> None:
    assert sorted(p.name for p in UNITS) == sorted(COMMANDS)


@pytest.mark.parametrize("unit_path", UNITS, ids=lambda p: p.name)
def test_every_variable_a_unit_uses_is_set_in_the_env_example(unit_path: Path) -> None:
    env = parse_env(EXAMPLE)
    used = used_vars(parse_unit(unit_path))
    assert used, "the unit reads its settings from the env file"
    missing = sorted(v for v in used if not env.get(v))
    assert missing == [], f"{unit_path.name} uses {missing} but {EXAMPLE.name} does not set them"


def test_every_variable_in_the_example_is_used_somewhere() -> None:
    used = set().union(*(used_vars(parse_unit(p)) for p in UNITS))
    unused = sorted(set(parse_env(EXAMPLE)) - used - PROCESS_ENV)
    assert unused == [], f"{EXAMPLE.name} sets {unused} but no unit reads them"


@pytest.mark.parametrize("unit_path", UNITS, ids=lambda p: p.name)
def test_units_restart_on_exit_75_and_not_on_a_usage_or_credential_error(unit_path: Path) -> None:
    service = parse_unit(unit_path)["Service"]
    assert service["Restart"] == ["on-failure"]
    assert "75" in service["RestartForceExitStatus"][0].split()
    assert {"2", "4"} <= set(service["RestartPreventExitStatus"][0].split())
    assert service["EnvironmentFile"] == ["/etc/ccrawl/recrawl-%i.env"]


def _seconds(value: str) -> float:
    from ccrawl.config import parse_duration

    return parse_duration(value.replace("min", "m"))


@pytest.mark.parametrize("unit_path", UNITS, ids=lambda p: p.name)
def test_units_have_a_memory_ceiling_and_a_stop_timeout_that_lets_a_seal_finish(unit_path: Path) -> None:
    service = parse_unit(unit_path)["Service"]
    assert re.fullmatch(r"\d+[KMG]", service["MemoryMax"][0])
    assert service["KillMode"] == ["mixed"]  # SIGTERM to the parent, which seals and checkpoints
    floor = 300 if "run" in unit_path.name else 60
    assert _seconds(service["TimeoutStopSec"][0]) >= floor


@pytest.mark.parametrize("unit_path", UNITS, ids=lambda p: p.name)
def test_exec_start_flags_exist_on_the_command_it_starts(unit_path: Path) -> None:
    group, name, target = COMMANDS[unit_path.name]
    module, attr = target.split(":")
    try:
        command: click.Command = getattr(importlib.import_module(module), attr)
    except ImportError as exc:  # the recrawl run command is the pipeline helper's
        pytest.fail(f"{target} does not import: {exc}")
    argv = shlex.split(parse_unit(unit_path)["Service"]["ExecStart"][0])
    assert argv[:3] == ["/usr/local/bin/ccrawl", group, name]
    known = {opt for p in command.params for opt in getattr(p, "opts", [])}
    flags = [a for a in argv[3:] if a.startswith("-")]
    assert flags and [f for f in flags if f not in known] == []


def test_example_values_are_valid_for_the_flags_they_feed() -> None:
    from ccrawl.config import parse_duration

    env = parse_env(EXAMPLE)
    assert 0 <= int(env["CCRAWL_SHARD"]) < int(env["CCRAWL_SHARDS"])
    assert env["CCRAWL_KIND"] in ("domains", "urls")
    assert parse_duration(env["CCRAWL_WATCH"]) > 0 and parse_duration(env["CCRAWL_MAX_STALL"]) > 0
    assert int(env["CCRAWL_COMMIT_EVERY"]) >= 1
    assert env["CCRAWL_STATE"].startswith("/var/lib/ccrawl/") and env["CCRAWL_CAPTURES"].startswith("/var/lib/ccrawl/")

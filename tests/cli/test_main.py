"""The CLI frame: global flags anywhere, one-line errors, exit codes, fast start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.cli.main import main


def run_cli(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], input=stdin, capture_output=True,
                          env=full_env, timeout=60)


def test_version_sentence_has_six_facts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("ccrawl 0.1.0 (commit ")
    assert line.count(",") == 4  # six facts: version, then five in the parentheses


def test_version_json_has_six_fields_and_says_which_core(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version", "-o", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert list(info) == ["version", "commit", "built", "platform", "python", "native"]
    assert info["native"] in ("native", "python", "partial")


def test_version_short(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version", "--short"]) == 0
    assert capsys.readouterr().out.strip() == "0.1.0"


def test_version_stays_a_sentence_when_piped() -> None:
    proc = run_cli("version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("ccrawl ")


def test_no_extensions_switch_forces_the_twins() -> None:
    proc = run_cli("version", "-o", "json", env={"CCRAWL_NO_EXTENSIONS": "1"})
    assert json.loads(proc.stdout)["native"] == "python"


def test_global_flags_work_before_and_after_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-o", "json", "version", "--fields", "version"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": "0.1.0"}
    assert main(["version", "-o", "json", "--fields", "version"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": "0.1.0"}


def test_unknown_output_format_is_one_line_and_exit_2() -> None:
    proc = run_cli("version", "-o", "yaml")
    assert proc.returncode == 2
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "unknown format 'yaml'" in err[0]
    assert b"Traceback" not in proc.stderr


def test_unknown_command_and_flag_are_usage_errors() -> None:
    for args in (["nope"], ["version", "--bogus"]):
        proc = run_cli(*args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.decode().strip().splitlines()) == 1


def test_broken_config_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[default]\nnot_a_setting = 1\n")
    proc = run_cli("config", "show", env={"CCRAWL_CONFIG_DIR": str(tmp_path)})
    assert proc.returncode == 1
    assert proc.stderr.decode().strip() == (
        f"ccrawl: {tmp_path}/config.toml:2: unknown setting 'not_a_setting' in [default]; "
        "`ccrawl config show` lists them"
    )


def test_config_show_names_the_source_of_each_value(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[default]\nretries = 2\n[bulk]\nworkers = 7\n')
    env = {"CCRAWL_CONFIG_DIR": str(tmp_path), "CCRAWL_USER_AGENT": "my-crawler/1"}
    proc = run_cli("config", "show", "--profile", "bulk", "-c", "CC-MAIN-2026-30", "-o", "jsonl", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {r["key"]: r for r in map(json.loads, proc.stdout.decode().splitlines())}
    assert rows["workers"]["value"] == "7" and rows["workers"]["source"] == "config [bulk]"
    assert rows["retries"]["source"] == "config [default]"
    assert rows["user_agent"]["source"] == "env CCRAWL_USER_AGENT"
    assert rows["crawl"]["source"] == "flag --crawl"
    assert rows["profile"]["value"] == "bulk"


def test_wrong_type_in_config_warns_and_runs(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[default]\nworkers = "lots"\n')
    proc = run_cli("config", "show", "-o", "jsonl", env={"CCRAWL_CONFIG_DIR": str(tmp_path)})
    assert proc.returncode == 0
    assert b"wrong type" in proc.stderr
    rows = {r["key"]: r for r in map(json.loads, proc.stdout.decode().splitlines())}
    assert rows["workers"]["value"] == "8"


def test_cache_show_and_clear(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "sub").mkdir(parents=True)
    (cache / "sub" / "f").write_bytes(b"12345")
    env = {"CCRAWL_CACHE_DIR": str(cache), "CCRAWL_CONFIG_DIR": str(tmp_path)}
    shown = json.loads(run_cli("cache", "-o", "json", env=env).stdout)
    assert shown == {"path": str(cache), "files": 1, "bytes": 5}
    proc = run_cli("cache", "clear", env=env)
    assert proc.returncode == 0 and b"cleared 1 files, 5 bytes" in proc.stderr
    assert list(cache.iterdir()) == []


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys\nfrom ccrawl.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "main(['version'])\n"
        "heavy = [m for m in ('aiohttp', 'pyarrow', 'duckdb', 'huggingface_hub', 'mcp') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert b"HEAVY []" in proc.stdout, proc.stdout + proc.stderr

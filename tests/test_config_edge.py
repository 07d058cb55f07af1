"""Settings that parse but cannot work are refused at the edge in one line (issue #13, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl import config
from ccrawl.cli.main import main
from ccrawl.errors import ConfigError, UsageError


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"CCRAWL_CONFIG_DIR": str(tmp_path), **extra}


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_non_finite_timeout_is_a_usage_error(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError, match="CCRAWL_TIMEOUT"):
        config.resolve({}, env=_env(tmp_path, CCRAWL_TIMEOUT=value))


def test_non_finite_duration_flag_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        config.parse_duration("inf")


def test_a_list_where_a_duration_belongs_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[default]\nworkers = 4\ntimeout = [1, 2]\n")
    with pytest.raises(ConfigError, match=r"config.toml:3: timeout = \[1, 2\]"):
        config.resolve({}, env=_env(tmp_path))


@pytest.mark.parametrize(("var", "value"), [
    ("CCRAWL_RETRIES", "1000000"), ("CCRAWL_RETRIES", "-1"), ("CCRAWL_BACKOFF", "30d"),
    ("CCRAWL_BACKOFF_MAX", "100d"), ("CCRAWL_GLOBAL_RATE", "2d"),
])
def test_absurd_retry_settings_are_refused(tmp_path: Path, var: str, value: str) -> None:
    with pytest.raises(UsageError, match=var):
        config.resolve({}, env=_env(tmp_path, **{var: value}))


@pytest.mark.parametrize("var", ["CCRAWL_CDX_ENDPOINT", "CCRAWL_DATA_ENDPOINT", "HF_ENDPOINT",
                                 "CCRAWL_COLLINFO_ENDPOINT", "CCRAWL_S3_ENDPOINT"])
def test_endpoint_that_is_not_a_url_is_refused(tmp_path: Path, var: str) -> None:
    with pytest.raises(UsageError, match=rf"{var}.*notaurl.*http"):
        config.resolve({}, env=_env(tmp_path, **{var: "notaurl"}))


@pytest.mark.parametrize("agent", ["bot/1\nX-Evil: 1", "bot/1\r", "bot\x00"])
def test_user_agent_with_a_control_character_is_refused(tmp_path: Path, agent: str) -> None:
    with pytest.raises(UsageError, match="user_agent"):
        config.resolve({}, env=_env(tmp_path, CCRAWL_USER_AGENT=agent))


def test_good_values_still_pass(tmp_path: Path) -> None:
    s = config.resolve({}, env=_env(tmp_path, CCRAWL_TIMEOUT="90s", CCRAWL_RETRIES="10",
                                    CCRAWL_CDX_ENDPOINT="http://user:pw@127.0.0.1:8080/base"))
    assert s.timeout == 90 and s.retries == 10


def test_cli_reports_a_bad_setting_in_one_line_with_exit_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("CCRAWL_TIMEOUT", "nan")
    code = main(["config", "show"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "CCRAWL_TIMEOUT" in err[0] and "internal error" not in err[0], err

"""Settings resolution: precedence, sources, the config file rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl import config
from ccrawl.errors import ConfigError, UsageError


def write(tmp_path: Path, text: str) -> dict[str, str]:
    (tmp_path / "config.toml").write_text(text)
    return {"CCRAWL_CONFIG_DIR": str(tmp_path)}


def test_precedence_is_flag_then_env_then_profile_then_default_table_then_builtin(tmp_path: Path) -> None:
    env = write(tmp_path, '[default]\nworkers = 8\nretries = 2\nglobal_rate = "500ms"\n[bulk]\nworkers = 64\n')
    env["CCRAWL_USER_AGENT"] = "my-crawler/1"
    env["CCRAWL_WORKERS"] = "7"
    s = config.resolve({"crawl": "CC-MAIN-2026-30"}, profile="bulk", env=env)
    assert (s.crawl, s.sources["crawl"]) == ("CC-MAIN-2026-30", "flag --crawl")
    assert (s.workers, s.sources["workers"]) == (7, "env CCRAWL_WORKERS")
    assert (s.retries, s.sources["retries"]) == (2, "config [default]")
    assert (s.global_rate, s.sources["global_rate"]) == (0.5, "config [default]")
    assert (s.user_agent, s.sources["user_agent"]) == ("my-crawler/1", "env CCRAWL_USER_AGENT")
    assert s.sources["timeout"] == "default"
    del env["CCRAWL_WORKERS"]
    s = config.resolve({}, profile="bulk", env=env)
    assert (s.workers, s.sources["workers"]) == (64, "config [bulk]")


def test_profile_selected_from_environment(tmp_path: Path) -> None:
    env = write(tmp_path, "[polite]\nretries = 8\n")
    env["CCRAWL_PROFILE"] = "polite"
    s = config.resolve({}, env=env)
    assert s.retries == 8 and s.profile == "polite"
    assert s.sources["profile"] == "env CCRAWL_PROFILE"


def test_unknown_key_stops_the_run_naming_the_line(tmp_path: Path) -> None:
    env = write(tmp_path, "[default]\nworkers = 8\n\n[bulk]\nwrokers = 64\n")
    with pytest.raises(ConfigError, match=r"config.toml:5: unknown setting 'wrokers' in \[bulk\]"):
        config.resolve({}, env=env)


def test_unknown_profile_lists_the_profiles_that_exist(tmp_path: Path) -> None:
    env = write(tmp_path, "[default]\n[bulk]\n[polite]\n")
    with pytest.raises(ConfigError, match="profiles declared: bulk, polite"):
        config.resolve({}, profile="fast", env=env)


def test_profile_without_a_config_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        config.resolve({}, profile="bulk", env={"CCRAWL_CONFIG_DIR": str(tmp_path)})


def test_wrong_type_warns_and_keeps_the_default(tmp_path: Path) -> None:
    env = write(tmp_path, '[default]\nworkers = "lots"\n')
    warnings: list[str] = []
    s = config.resolve({}, env=env, warn=warnings.append)
    assert s.workers == 8 and s.sources["workers"] == "default"
    assert len(warnings) == 1 and "config.toml:2" in warnings[0] and "workers" in warnings[0]


def test_broken_toml_is_one_config_error(tmp_path: Path) -> None:
    env = write(tmp_path, "[default\nworkers = 8\n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        config.resolve({}, env=env)


def test_config_dir_rules() -> None:
    assert config.config_dir({"CCRAWL_CONFIG_DIR": "/a"})[0] == Path("/a")
    assert config.config_dir({"XDG_CONFIG_HOME": "/x"})[0] == Path("/x/ccrawl")
    assert config.config_dir({"CCRAWL_CONFIG_DIR": "/a", "XDG_CONFIG_HOME": "/x"})[0] == Path("/a")
    assert config.config_dir({})[0].parts[-2:] == (".config", "ccrawl")


def test_cache_dir_follows_data_dir(tmp_path: Path) -> None:
    s = config.resolve({"data_dir": str(tmp_path)}, env={"CCRAWL_CONFIG_DIR": str(tmp_path)})
    assert s.cache_dir == str(tmp_path / "cache")
    assert s.sources["cache_dir"] == "derived from data_dir"


def test_bad_flag_value_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--global-rate"):
        config.resolve({"global_rate": "fast"}, env={"CCRAWL_CONFIG_DIR": str(tmp_path)})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("500ms", 0.5), ("5s", 5.0), ("2m0s", 120.0), ("1h30m", 5400.0), ("30d", 2592000.0), ("8w", 4838400.0),
     ("0", 0.0), ("1.5", 1.5)],
)
def test_durations_parse_the_go_way(text: str, seconds: float) -> None:
    assert config.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "fast", "5 s", "-1s", "5x", "s"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        config.parse_duration(text)


def test_format_duration_round_trips() -> None:
    for seconds in (0.2, 1.0, 120.0, 5400.0, 0.0):
        assert config.parse_duration(config.format_duration(seconds)) == pytest.approx(seconds)

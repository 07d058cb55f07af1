"""Settings resolved once per run, each value with the place it came from.

Precedence, highest first: a command-line flag, the environment (``CCRAWL_*``), the ``--profile``
table of the config file (or ``CCRAWL_PROFILE``), its ``[default]`` table, the built-in default.
``ccrawl config show`` prints the result with those sources.

The file is ``config.toml`` in ``$CCRAWL_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/ccrawl``, else
``~/.config/ccrawl``. A key ccrawl does not read, or a profile the file does not declare, stops the
run naming the line; a value of the wrong type is reported on stderr and the default is used.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ccrawl import __version__
from ccrawl.errors import ConfigError, UsageError

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w)")
_UNIT_SECONDS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0,
}


class UnusableValue(ValueError):
    """A value of the right type that no run can use (a duration of NaN or infinity): an error, not a warning."""


def parse_duration(value: object) -> float:
    """Seconds from a Go-style duration: ``500ms``, ``5s``, ``2m0s``, ``1h30m``, ``30d``; a bare number is seconds.

    Units: ``ns``, ``us`` (``µs``), ``ms``, ``s``, ``m`` (minutes), ``h``, ``d`` (24 h), ``w`` (7 d); parts add up.
    Every duration in ccrawl (flags, settings, the client's keyword arguments) is read by this function.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise UnusableValue(f"not a finite duration: {value!r}")
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"not a duration: {value!r} (write it as 500ms, 5s, 2m or 1h30m)")
    text = value.strip()
    if not text:
        raise ValueError("an empty duration")
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            raise UnusableValue(f"not a finite duration: {value!r}")
        if number < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return number
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(text) or pos == 0:
        raise ValueError(f"not a duration: {value!r} (write it as 500ms, 5s, 2m or 1h30m)")
    if not math.isfinite(total):
        raise UnusableValue(f"not a finite duration: {value!r}")
    return total


#: byte units: SI (powers of ten) and IEC (powers of two); a bare letter is SI, case does not matter
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30,
    "ti": 1 << 40, "tib": 1 << 40,
}


def parse_size(value: str | int) -> int:
    """Bytes from a size: a byte count, or a number with a unit.

    SI units are powers of ten: ``kB``/``k`` = 1000, ``MB``/``M`` = 10**6, ``GB``/``G`` = 10**9,
    ``TB``/``T`` = 10**12; IEC units are powers of two: ``KiB`` = 1024, ``MiB`` = 2**20, ``GiB`` = 2**30,
    ``TiB`` = 2**40. Case does not matter; ``1.5GB`` is 1,500,000,000.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative: {value!r}")
        return value
    m = _SIZE.match(value)
    unit = (m.group(2) or "").lower() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise ValueError(f"not a size: {value!r} (write it as 65536, 512MB or 1GiB)")
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def size_flag(value: str | int, flag: str) -> int:
    """:func:`parse_size` for a command-line flag: a bad value is a usage error naming the flag."""
    try:
        return parse_size(value)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from exc


def duration_flag(value: str | float | int, flag: str) -> float:
    """:func:`parse_duration` for a command-line flag: a bad value is a usage error naming the flag."""
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from exc


def format_duration(seconds: float) -> str:
    """The Go-style spelling of a duration, as ``config show`` prints it."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    whole = int(seconds)
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    frac = seconds - whole
    sec = f"{s + frac:g}s"
    if h:
        return f"{h}h{m}m{sec}"
    if m:
        return f"{m}m{sec}"
    return sec


def _parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _parse_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not a whole number: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    raise ValueError(f"not a whole number: {value!r}")


def _parse_str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a string: {value!r}")
    return value


def _parse_path(value: object) -> str:
    return os.path.expanduser(_parse_str(value))


#: What a setting holds once parsed (None: not set, a default filled in later).
SettingValue: TypeAlias = str | int | float | bool | None

PARSERS: dict[str, Callable[[object], SettingValue]] = {
    "str": _parse_str,
    "path": _parse_path,
    "int": _parse_int,
    "bool": _parse_bool,
    "duration": parse_duration,
}


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its key, the environment variable that beats the file, its type and default."""

    key: str
    env: str
    kind: str
    default: SettingValue
    help: str


def _default_data_dir() -> str:
    return os.path.expanduser("~/data/ccrawl")


SETTINGS: tuple[Setting, ...] = (
    Setting("crawl", "CCRAWL_CRAWL", "str", "latest", "Default crawl, same values as -c"),
    Setting("source", "CCRAWL_SOURCE", "str", "https", "Bulk data source: https or s3"),
    Setting("data_dir", "CCRAWL_DATA_DIR", "path", None, "Root data directory"),
    Setting("cache_dir", "CCRAWL_CACHE_DIR", "path", None, "Cache directory, follows data_dir when unset"),
    Setting("library_dir", "CCRAWL_LIBRARY", "path", os.path.expanduser("~/notes/ccrawl"), "Dataset library root"),
    Setting("db_path", "CCRAWL_DB_PATH", "path", None, "Local DuckDB file, follows data_dir when unset"),
    Setting("workers", "CCRAWL_WORKERS", "int", 8, "Concurrency for downloads and scans"),
    Setting("rate", "CCRAWL_RATE", "duration", 0.0, "Per-process delay between requests"),
    Setting("global_rate", "CCRAWL_GLOBAL_RATE", "duration", 0.2, "Host-wide gap between Common Crawl requests"),
    Setting("timeout", "CCRAWL_TIMEOUT", "duration", 0.0, "Per-request timeout (0 = none)"),
    Setting("retries", "CCRAWL_RETRIES", "int", 5, "Retry attempts"),
    Setting("backoff", "CCRAWL_BACKOFF", "duration", 1.0, "Base wait before the first retry"),
    Setting("backoff_max", "CCRAWL_BACKOFF_MAX", "duration", 30.0, "Cap on a single retry wait"),
    Setting("user_agent", "CCRAWL_USER_AGENT", "str", f"ccrawl/{__version__}", "User agent sent to Common Crawl"),
    Setting("urls_repo", "CCRAWL_URLS_REPO", "str", "open-index/ccrawl-urls", "Dataset for urls publish"),
    Setting("domains_repo", "CCRAWL_DOMAINS_REPO", "str", "open-index/ccrawl-domains", "Dataset for domains publish"),
    Setting("news_repo", "CCRAWL_NEWS_REPO", "str", "open-index/ccrawl-news", "Dataset for news publish/search"),
    Setting(
        "recrawl_domains_repo", "CCRAWL_RECRAWL_DOMAINS_REPO", "str", "open-index/ccrawl-recrawl-domains",
        "Dataset recrawl publish --kind domains commits to",
    ),
    Setting(
        "recrawl_urls_repo", "CCRAWL_RECRAWL_URLS_REPO", "str", "open-index/ccrawl-recrawl-urls",
        "Dataset recrawl publish --kind urls commits to",
    ),
    Setting(
        "collinfo_endpoint", "CCRAWL_COLLINFO_ENDPOINT", "str", "https://index.commoncrawl.org/collinfo.json",
        "Where the crawl list comes from",
    ),
    Setting(
        "data_endpoint", "CCRAWL_DATA_ENDPOINT", "str", "https://data.commoncrawl.org",
        "Where manifests, WARC files and the columnar index come from",
    ),
    Setting(
        "cdx_endpoint", "CCRAWL_CDX_ENDPOINT", "str", "https://index.commoncrawl.org", "Where the URL index comes from"
    ),
    Setting("s3_endpoint", "CCRAWL_S3_ENDPOINT", "str", "https://commoncrawl.s3.amazonaws.com", "Base for --source s3"),
    Setting("hf_endpoint", "HF_ENDPOINT", "str", "https://huggingface.co", "HuggingFace Hub endpoint"),
    Setting(
        "allow_private_addresses", "CCRAWL_ALLOW_PRIVATE_ADDRESSES", "bool", False,
        "Let every command that fetches (crawl fetch/run, content, index build --urls, recrawl run) "
        "fetch loopback, private and link-local addresses (docs/fetch.md)",
    ),
    Setting(
        "crawl_max_redirects", "CCRAWL_CRAWL_MAX_REDIRECTS", "int", 5,
        "Redirects crawl run follows per chain; a longer chain is a failed fetch (docs/crawl.md)",
    ),
)

SETTINGS_BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def config_dir(env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """The config directory and how it was chosen."""
    env = os.environ if env is None else env
    if env.get("CCRAWL_CONFIG_DIR"):
        return Path(env["CCRAWL_CONFIG_DIR"]).expanduser(), "env CCRAWL_CONFIG_DIR"
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "ccrawl", "env XDG_CONFIG_HOME"
    return Path("~/.config/ccrawl").expanduser(), "default"


def _key_lines(text: str) -> dict[tuple[str, str], int]:
    """Line number of every ``key =`` in every ``[table]``, for errors that name the line."""
    lines: dict[tuple[str, str], int] = {}
    table = ""
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        head = re.fullmatch(r"\[\s*([^\]]+?)\s*\]\s*(#.*)?", stripped)
        if head:
            table = head.group(1).strip().strip('"')
            lines.setdefault((table, ""), n)
            continue
        m = re.match(r'\s*"?([A-Za-z0-9_\-.]+)"?\s*=', line)
        if m:
            lines.setdefault((table, m.group(1)), n)
    return lines


@dataclass(slots=True)
class ConfigFile:
    """The parsed config file: its tables and where each key sits."""

    path: Path
    tables: dict[str, dict[str, object]]
    lines: dict[tuple[str, str], int]

    def line_of(self, table: str, key: str = "") -> int:
        return self.lines.get((table, key), 0)


def load_config_file(path: Path) -> ConfigFile | None:
    """Parse ``path``; None when it does not exist. Unknown keys and bad TOML raise ConfigError."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    lines = _key_lines(text)
    tables: dict[str, dict[str, object]] = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            n = lines.get(("", name), 0)
            raise ConfigError(
                f"{path}:{n}: setting {name!r} is outside any table; put it under [default] or a [profile]"
            )
        for key in body:
            if key not in SETTINGS_BY_KEY:
                n = lines.get((name, key), 0)
                raise ConfigError(f"{path}:{n}: unknown setting {key!r} in [{name}]; `ccrawl config show` lists them")
        tables[name] = dict(body)
    return ConfigFile(path, tables, lines)


@dataclass(slots=True)
class Settings:
    """Resolved values and their sources; attribute access reads a value (``settings.workers``)."""

    values: dict[str, Any]
    sources: dict[str, str]
    profile: str | None
    config_file: Path
    config_file_source: str

    def __getattr__(self, key: str) -> Any:
        try:
            return self.values[key]
        except KeyError:
            raise AttributeError(key) from None

    def rows(self) -> list[dict[str, str]]:
        """The rows ``config show`` prints: key, value, source."""
        out = []
        for s in SETTINGS:
            value = self.values[s.key]
            shown = format_duration(value) if s.kind == "duration" else value
            out.append({"key": s.key, "value": "" if shown is None else str(shown), "source": self.sources[s.key]})
        out.append({"key": "profile", "value": self.profile or "", "source": self.sources.get("profile", "default")})
        derived = f"derived from {self.config_file_source}"
        out.append({"key": "config_file", "value": str(self.config_file), "source": derived})
        return out


def _warn(message: str) -> None:
    print(f"ccrawl: warning: {message}", file=sys.stderr)


def resolve(
    flags: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] = _warn,
) -> Settings:
    """Resolve every setting from flags, environment, config profile, ``[default]`` and built-ins.

    ``flags`` maps setting keys to values given on the command line (None = not given) and are
    assumed already typed by the CLI parser.
    """
    env = os.environ if env is None else env
    flags = flags or {}
    cdir, cdir_source = config_dir(env)
    path = cdir / "config.toml"
    cfg = load_config_file(path)

    profile_source = "default"
    if profile:
        profile_source = "flag --profile"
    elif env.get("CCRAWL_PROFILE"):
        profile, profile_source = env["CCRAWL_PROFILE"], "env CCRAWL_PROFILE"
    if profile:
        declared = [t for t in (cfg.tables if cfg else {}) if t != "default"]
        if profile not in declared:
            where = f"{path}" if cfg else f"{path} (which does not exist)"
            known = ", ".join(declared) if declared else "none"
            raise ConfigError(f"profile {profile!r} is not declared in {where}; profiles declared: {known}")

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for s in SETTINGS:
        parse = PARSERS[s.kind]
        chosen, source = s.default, "default"
        layers: list[tuple[object, str, str]] = []
        if cfg and s.key in cfg.tables.get("default", {}):
            n = cfg.line_of("default", s.key)
            layers.append((cfg.tables["default"][s.key], "config [default]", f"{path}:{n}"))
        if cfg and profile and s.key in cfg.tables.get(profile, {}):
            n = cfg.line_of(profile, s.key)
            layers.append((cfg.tables[profile][s.key], f"config [{profile}]", f"{path}:{n}"))
        for raw, _, where in layers:
            if isinstance(raw, list | dict):
                # not a value of the wrong type but the wrong shape: no default stands in for it
                raise ConfigError(f"{where}: {s.key} = {raw!r} is a TOML {type(raw).__name__}; {s.key} takes one "
                                  f"{s.kind} value (`ccrawl config show` lists them)")
        if env.get(s.env) not in (None, ""):
            layers.append((env[s.env], f"env {s.env}", f"environment variable {s.env}"))
        for raw, src, where in layers:
            try:
                chosen, source = parse(raw), src
            except UnusableValue as exc:
                raise UsageError(f"{where}: {s.key} = {raw!r}: {exc}") from None
            except ValueError as exc:
                warn(f"{where}: {s.key} = {raw!r} is the wrong type ({exc}); using {chosen!r}")
        if flags.get(s.key) is not None:
            flag_value = flags[s.key]
            try:
                chosen, source = parse(flag_value), f"flag --{s.key.replace('_', '-')}"
            except ValueError as exc:
                raise UsageError(f"--{s.key.replace('_', '-')}: {exc}") from None
        values[s.key], sources[s.key] = chosen, source

    if values["data_dir"] is None:
        values["data_dir"], sources["data_dir"] = _default_data_dir(), "default"
    if values["cache_dir"] is None:
        values["cache_dir"] = os.path.join(values["data_dir"], "cache")
        sources["cache_dir"] = "derived from data_dir"
    if values["db_path"] is None:
        values["db_path"] = os.path.join(values["data_dir"], "ccrawl.duckdb")
        sources["db_path"] = "derived from data_dir"
    if values["source"] not in ("https", "s3"):
        raise UsageError(f"source must be https or s3, not {values['source']!r} (from {sources['source']})")
    if values["workers"] < 1:
        raise UsageError(f"workers must be at least 1, not {values['workers']} (from {sources['workers']})")
    from ccrawl.config_checks import check_usable

    check_usable(values, sources)
    sources["profile"] = profile_source
    return Settings(values, sources, profile, path, cdir_source)


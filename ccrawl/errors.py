"""The one exception tree of ccrawl, each class carrying the exit code the CLI returns.

::

    CcrawlError                 1   something failed; the message says what and, where it can, the fix
    ├── UsageError              2   a bad flag, value or combination of them
    ├── NothingMatched          3   the query ran and matched nothing
    ├── CredentialMissing       4   a token is needed (HF_TOKEN) and is not set
    ├── Unreachable             8   Common Crawl (or another remote) could not be reached at all
    ├── TemporaryFailure       75   run it again: a stall, a 429 storm, a lock held elsewhere
    ├── InputError              1   bad input data: corrupt gzip, truncated WARC, unparseable line
    └── ConfigError             1   the config file is wrong (unknown key, unknown profile, bad TOML)

The CLI prints ``ccrawl: <message>`` on one line and exits with the code; ``-v`` adds the
traceback. Library callers catch the class they care about.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOTHING = 3
EXIT_CREDENTIAL = 4
EXIT_UNREACHABLE = 8
EXIT_TEMPORARY = 75


class CcrawlError(Exception):
    """Base of every error ccrawl raises on purpose."""

    exit_code = EXIT_ERROR


class UsageError(CcrawlError):
    """A flag, a value or a combination that cannot work; name the flag in the message."""

    exit_code = EXIT_USAGE


class NothingMatched(CcrawlError):
    """The query was valid and matched nothing."""

    exit_code = EXIT_NOTHING


class CredentialMissing(CcrawlError):
    """A credential the operation needs is not set."""

    exit_code = EXIT_CREDENTIAL


class Unreachable(CcrawlError):
    """A remote endpoint could not be reached at all (transport failure)."""

    exit_code = EXIT_UNREACHABLE


class TemporaryFailure(CcrawlError):
    """Worth running again: a stall, a rate limit that did not clear, a lock held elsewhere."""

    exit_code = EXIT_TEMPORARY


class Absent(CcrawlError):
    """A store the command reads has not been made yet (an index, a database): say how to make it.
    A server answers 503: the request was fine, the server is not ready for it."""

    exit_code = EXIT_ERROR


class InputError(CcrawlError):
    """Input data that cannot be read: corrupt gzip, truncated WARC, a line that is not text."""

    exit_code = EXIT_ERROR


class ConfigError(CcrawlError):
    """The config file cannot be used as written."""

    exit_code = EXIT_ERROR

"""A dataset repo on the HuggingFace Hub (or any server speaking its API), through huggingface_hub.

The endpoint is ``endpoint=`` when given, else ``HF_ENDPOINT``, else huggingface.co. The token is passed
explicitly on every call (``HF_TOKEN`` / ``HUGGINGFACE_TOKEN`` by default) so a token saved by
``huggingface-cli login`` never decides silently where a fleet pushes; without one, reads go out
anonymous and a write raises ``CredentialMissing`` before any request.

huggingface_hub errors are translated into the hub layer's: 429/5xx/timeouts become
:class:`~ccrawl.hub.repo.HubBusy` (with the server's Retry-After when it sent one), 412/409 on a
commit become :class:`~ccrawl.hub.repo.CommitConflict`, a refused token becomes
``CredentialMissing`` and a missing repo ``NothingMatched``.

huggingface_hub uploads through xet when ``hf_xet`` is installed; set ``HF_HUB_DISABLE_XET=1`` (or pass
``xet=False``) to use the plain LFS batch + PUT path, which is what a server other than huggingface.co
(the fake Hub of the tests, a mirror) speaks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar
from urllib.parse import quote

from ccrawl.errors import EXIT_UNREACHABLE, CredentialMissing, NothingMatched
from ccrawl.hub.repo import (
    Add,
    CommitConflict,
    DatasetRepo,
    HubBusy,
    HubError,
    HubFile,
    normalize_paths,
    require_token,
)
from ccrawl.redact import redact_userinfo

T = TypeVar("T")

#: paths-info takes a list of paths per request; larger sets go in chunks of this many.
PATHS_INFO_CHUNK = 1000

_BUSY_STATUS = {408, 429, 500, 502, 503, 504}


class HubUnreachable(HubBusy):
    """The Hub endpoint could not be reached at all: its name does not resolve, or every attempt failed
    to connect. Still a :class:`HubBusy` (a publisher waits and tries again), but a command that
    meets it exits 8 like every other unreachable remote, not 75."""

    exit_code = EXIT_UNREACHABLE


_RETRY_LINE = re.compile(r"Retrying in (?P<wait>[\d.]+)s \[Retry (?P<n>\d+)/(?P<of>\d+)\]")


class _HubChatter(logging.Filter):
    """huggingface_hub's retry warnings (two lines per attempt, the request repeated in each) become
    ccrawl's one line per wait a person notices, ``... retrying (2/5) in 4 s``; the rest are dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.last_error = ""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if " thrown while requesting " in message:
            self.last_error = message.split(" thrown while requesting ")[0].strip("'")
            return False
        m = _RETRY_LINE.search(message)
        if m is None:
            return record.levelno >= logging.ERROR
        if float(m["wait"]) >= 1.0:
            reason = f"{self.last_error}; " if self.last_error else ""
            line = f"ccrawl: hub: {reason}retrying ({m['n']}/{m['of']}) in {float(m['wait']):.0f} s"
            print(redact_userinfo(line), file=sys.stderr, flush=True)
        return False


_CHATTER = _HubChatter()


def quiet_hub_logs() -> None:
    """Install the filter on the loggers huggingface_hub retries through (idempotent)."""
    for name in ("huggingface_hub", "huggingface_hub.hf_api", "huggingface_hub.utils._http",
                 "huggingface_hub.file_download", "huggingface_hub._commit_api"):
        logger = logging.getLogger(name)
        if _CHATTER not in logger.filters:
            logger.addFilter(_CHATTER)


_RESOLVED: dict[str, bool] = {}


def check_endpoint_resolves(endpoint: str) -> None:
    """Fail at once, exit 8, when the endpoint's host name does not resolve (once per host and process).

    huggingface_hub retries a failed lookup like a dropped connection, five times over ~25 s; a name
    that does not exist is an answer, not a transient failure. Skipped behind a proxy, which resolves
    names itself."""
    from urllib.parse import urlsplit

    from ccrawl.net.client import name_not_known

    parts = urlsplit(endpoint)
    host = parts.hostname
    if not host or any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
                                                    "ALL_PROXY", "all_proxy")):
        return
    if _RESOLVED.get(host):
        return
    try:
        socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM)
    except OSError as exc:
        if name_not_known(exc):
            raise HubUnreachable(
                f"cannot reach the Hub at {redact_userinfo(endpoint)}: the name {host} does not resolve "
                "(no DNS answer for it); check the network, or set HF_ENDPOINT to a mirror"
            ) from exc
        return  # a transient resolver failure: the request retries it
    _RESOLVED[host] = True


class _Answer(Protocol):
    """What the retry hint needs of an HTTP response: its headers."""

    @property
    def headers(self) -> Mapping[str, str]: ...


def _retry_after(response: _Answer | None) -> float | None:
    value = response.headers.get("Retry-After") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class HfRepo(DatasetRepo):
    """A repo on a Hub server; ``repo_type`` is ``dataset`` unless told otherwise."""

    def __init__(
        self,
        repo_id: str,
        *,
        endpoint: str | None = None,
        token: str | None = None,
        repo_type: str = "dataset",
        xet: bool | None = None,
        timeout: float = 60.0,
        progress_bars: bool = False,
    ) -> None:
        from huggingface_hub import HfApi, constants
        from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]

        quiet_hub_logs()
        if xet is False:
            constants.HF_HUB_DISABLE_XET = True
        if not progress_bars:
            # A publisher runs for months under a supervisor: per-file bars would fill its log.
            disable_progress_bars()
        self.repo_id = repo_id
        self.repo_type = repo_type
        self.token = token
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
        #: The endpoint as messages show it: ``user:password@`` redacted (issue #13).
        self.shown_endpoint = redact_userinfo(self.endpoint)
        self.timeout = timeout
        self._api = HfApi(endpoint=self.endpoint)

    @property
    def _auth(self) -> str | bool:
        # False, not None: None would let huggingface_hub fall back to a token saved on disk.
        return self.token or False

    # -- error translation -----------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        import httpx2
        from huggingface_hub.errors import (
            EntryNotFoundError,
            HfHubHTTPError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        check_endpoint_resolves(self.endpoint)
        try:
            return fn()
        except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
            raise NothingMatched(
                f"{what}: {self.repo_type} repo {self.repo_id} not found on {self.shown_endpoint}"
            ) from exc
        except EntryNotFoundError as exc:
            raise NothingMatched(f"{what}: not found in {self.repo_id}") from exc
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status in _BUSY_STATUS:
                raise HubBusy(f"{what}: {self.shown_endpoint} answered {status}", _retry_after(exc.response)) from exc
            if status in (409, 412):
                raise CommitConflict(f"{what}: {self.repo_id} moved since it was read ({status})") from exc
            if status in (401, 403):
                raise CredentialMissing(
                    f"{what}: {self.shown_endpoint} refused the token ({status}); check HF_TOKEN has write access to "
                    f"{self.repo_id}"
                ) from exc
            first_line = redact_userinfo(str(exc).strip().splitlines()[0])
            raise HubError(f"{what}: {self.shown_endpoint} answered {status}: {first_line}") from exc
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            # no connection on any attempt: unreachable (exit 8), still a HubBusy for a publisher's wait
            raise HubUnreachable(f"{what}: cannot reach the Hub at {self.shown_endpoint}: {type(exc).__name__}: "
                                 f"{redact_userinfo(str(exc))}; check the network, or set HF_ENDPOINT to a mirror") \
                from exc
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as exc:
            detail = redact_userinfo(str(exc))
            raise HubBusy(f"{what}: {self.shown_endpoint} did not answer: {type(exc).__name__}: {detail}") from exc
        except RuntimeError as exc:
            # huggingface_hub wraps a failed LFS PUT as RuntimeError("Error while uploading ...").
            cause = exc.__cause__
            if isinstance(cause, HfHubHTTPError | httpx2.HTTPError):
                raise HubBusy(f"{what}: upload failed: {redact_userinfo(str(cause))}") from exc
            raise

    # -- repo ------------------------------------------------------------------------------------

    def exists_repo(self) -> bool:
        try:
            self.head()
        except NothingMatched:
            return False
        return True

    def create(self, *, private: bool = False) -> None:
        token = require_token(self.token)
        self._call(
            "create repo",
            lambda: self._api.create_repo(
                self.repo_id, repo_type=self.repo_type, private=private, exist_ok=True, token=token
            ),
        )

    def delete_repo(self) -> None:
        self._call(
            "delete repo", lambda: self._api.delete_repo(self.repo_id, repo_type=self.repo_type, token=self._auth)
        )

    def head(self) -> str | None:
        info = self._call(
            "repo info", lambda: self._api.repo_info(self.repo_id, repo_type=self.repo_type, token=self._auth)
        )
        sha = info.sha
        return str(sha) if sha else None

    # -- reads -----------------------------------------------------------------------------------

    def list_files(self, prefix: str = "") -> list[HubFile]:
        from huggingface_hub.hf_api import RepoFile

        prefix = prefix.strip("/")

        def listing() -> list[HubFile]:
            entries = self._api.list_repo_tree(
                self.repo_id,
                path_in_repo=prefix or None,
                recursive=True,
                repo_type=self.repo_type,
                token=self._auth,
            )
            return [
                HubFile(e.path, int(e.size), e.lfs.sha256 if e.lfs else str(e.blob_id or ""))
                for e in entries
                if isinstance(e, RepoFile)
            ]

        try:
            files = self._call("list files", listing)
        except NothingMatched:
            if prefix and self.exists_repo():
                return []  # an absent folder is an empty listing, not an error
            raise
        return sorted(files, key=lambda f: f.path)

    def _url(self, path: str) -> str:
        from huggingface_hub import hf_hub_url

        return hf_hub_url(self.repo_id, path, repo_type=self.repo_type, endpoint=self.endpoint)

    def read_range(self, path: str, start: int, length: int) -> bytes:
        from huggingface_hub.utils import (  # type: ignore[attr-defined]
            build_hf_headers,
            hf_raise_for_status,
            http_backoff,
        )

        if length <= 0:
            return b""
        headers = build_hf_headers(token=self._auth)
        headers["Range"] = f"bytes={start}-{start + length - 1}"
        headers["Accept-Encoding"] = "identity"

        def get() -> bytes:
            response = http_backoff(
                "GET", self._url(path), headers=headers, follow_redirects=True, timeout=self.timeout, max_retries=3
            )
            if response.status_code == 416:
                return b""  # a range starting at or past the end of the file
            hf_raise_for_status(response)
            data = response.content
            if response.status_code == 200:  # the server ignored Range: slice the whole body
                data = data[start : start + length]
            return bytes(data)

        return self._call(f"read {path}", get)

    def exists(self, paths: Sequence[str]) -> dict[str, bool]:
        from huggingface_hub.hf_api import RepoFile

        clean = normalize_paths(paths)
        found: set[str] = set()
        for i in range(0, len(clean), PATHS_INFO_CHUNK):
            chunk = clean[i : i + PATHS_INFO_CHUNK]
            infos = self._call(
                "paths-info",
                lambda chunk=chunk: self._api.get_paths_info(  # type: ignore[misc]
                    self.repo_id, chunk, repo_type=self.repo_type, token=self._auth
                ),
            )
            found.update(i.path for i in infos if isinstance(i, RepoFile))
        return {p: c in found for p, c in zip(paths, clean, strict=True)}

    def download(self, path: str, dest: Path) -> Path:
        from huggingface_hub import hf_hub_download

        dest.parent.mkdir(parents=True, exist_ok=True)
        with _scratch_dir(dest.parent) as scratch:

            def fetch() -> str:
                return hf_hub_download(
                    self.repo_id,
                    path,
                    repo_type=self.repo_type,
                    endpoint=self.endpoint,
                    token=self._auth,
                    local_dir=scratch,
                    force_download=True,
                )

            got = self._call(f"download {path}", fetch)
            os.replace(got, dest)
        return dest

    # -- writes ----------------------------------------------------------------------------------

    def commit(
        self,
        adds: Sequence[Add],
        deletes: Sequence[str] = (),
        *,
        message: str,
        parent: str | None = None,
    ) -> str:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        token = require_token(self.token)
        normalize_paths([a.path_in_repo for a in adds] + list(deletes))

        def send() -> str:
            # Fresh operation objects on every attempt: huggingface_hub refuses to reuse them.
            ops: list[CommitOperationAdd | CommitOperationDelete] = [
                CommitOperationAdd(
                    path_in_repo=a.path_in_repo,
                    path_or_fileobj=a.source if isinstance(a.source, bytes) else str(a.source),
                )
                for a in adds
            ]
            ops += [CommitOperationDelete(path_in_repo=p) for p in deletes]
            info = self._api.create_commit(
                self.repo_id,
                ops,
                commit_message=message,
                repo_type=self.repo_type,
                parent_commit=parent,
                token=token,
            )
            return str(info.oid)

        return self._call("commit", send)

    def resolve_url(self, path: str) -> str:
        """The resolve URL of ``path`` on the default branch (for readers outside this layer)."""
        return f"{self.endpoint}/{self.repo_type}s/{self.repo_id}/resolve/main/{quote(path)}"


@contextlib.contextmanager
def _scratch_dir(beside: Path) -> Iterator[str]:
    """A temporary directory on the destination's filesystem, so the final move is a rename."""
    path = tempfile.mkdtemp(prefix=".hfdl-", dir=beside)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)

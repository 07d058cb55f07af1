"""The hub layer: one interface over a dataset repo, whether it lives on the HuggingFace Hub or on disk.

Everything that publishes or reads a dataset goes through :class:`DatasetRepo`:

* :meth:`~DatasetRepo.list_files` -- every file with its size (one listing, paginated by the backend);
* :meth:`~DatasetRepo.read_range` -- bytes ``[start, start+length)`` of one file (ranged reads);
* :meth:`~DatasetRepo.exists` -- which of many paths exist, in **one** call (``paths-info`` on the Hub),
  so a publisher learns that a content-addressed shard is already there before any byte moves;
* :meth:`~DatasetRepo.commit` -- a set of adds and deletes applied atomically, optionally only if the
  repo is still at ``parent`` (the Hub's ``parentCommit``): a mismatch raises :class:`CommitConflict`;
* :meth:`~DatasetRepo.download` -- one whole file to a local path.

Two implementations: :class:`ccrawl.hub.hfhub.HfRepo` (huggingface_hub, endpoint configurable)
and :class:`ccrawl.hub.localhub.LocalRepo` (a directory; the offline default and the demo's).
:func:`ccrawl.hub.factory.open_repo` picks one from a repo spec.

Failures a caller can act on are typed: :class:`CommitConflict` (someone committed first: re-read and
retry), :class:`HubBusy` (429/503/timeouts: back off and retry) and, from :mod:`ccrawl.errors`,
``CredentialMissing`` (exit 4) for a push without a token.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ccrawl.errors import CredentialMissing, TemporaryFailure, UsageError

#: Environment variables a token is read from, in order.
TOKEN_ENV = ("HF_TOKEN", "HUGGINGFACE_TOKEN")

#: Environment variable selecting a local directory hub (``CCRAWL_HUB=/srv/hub``) instead of the Hub.
HUB_ENV = "CCRAWL_HUB"


@dataclass(frozen=True, slots=True)
class HubFile:
    """One file in a repo: its path from the repo root, its size in bytes and a content tag.

    ``etag`` changes whenever the content does (the git blob id or LFS sha256 on the Hub, the sha256 on
    a local hub); '' when the hub did not say. Size alone is not enough to notice a rewrite.
    """

    path: str
    size: int
    etag: str = ""


@dataclass(frozen=True, slots=True)
class Add:
    """A file to add or replace in a commit: from a local path or from bytes."""

    path_in_repo: str
    source: Path | bytes

    def size(self) -> int:
        return len(self.source) if isinstance(self.source, bytes) else self.source.stat().st_size

    def read(self) -> bytes:
        return self.source if isinstance(self.source, bytes) else self.source.read_bytes()


class HubError(TemporaryFailure):
    """A hub operation failed in a way worth retrying later (exit 75 when it reaches the CLI)."""


class HubBusy(HubError):
    """The hub asked us to slow down or was unavailable (429, 503, a timeout): back off and retry."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CommitConflict(HubError):
    """The repo moved since ``parent``: re-read what the commit depends on and try again."""


def token_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """``HF_TOKEN``, else ``HUGGINGFACE_TOKEN``, else None (an empty value counts as unset)."""
    env = os.environ if environ is None else environ
    for name in TOKEN_ENV:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def require_token(token: str | None) -> str:
    """The token, or :class:`CredentialMissing` (exit 4) with the one-line fix."""
    if not token:
        raise CredentialMissing(
            "pushing to the Hub needs a token: export HF_TOKEN=hf_... (or HUGGINGFACE_TOKEN), "
            "or pass --no-push to rehearse without uploading"
        )
    return token


class DatasetRepo(ABC):
    """One dataset repo on some hub. Paths are POSIX, relative to the repo root."""

    repo_id: str

    @abstractmethod
    def exists_repo(self) -> bool:
        """True when the repo exists (and is readable)."""

    @abstractmethod
    def create(self, *, private: bool = False) -> None:
        """Create the repo; an existing repo is left as it is."""

    def delete_repo(self) -> None:
        """Delete the whole repo, its history included (``publish delete-obsolete``)."""
        raise TypeError(f"cannot delete a {type(self).__name__}")

    @abstractmethod
    def head(self) -> str | None:
        """The commit id the default branch points at, None for a repo with no commit."""

    @abstractmethod
    def list_files(self, prefix: str = "") -> list[HubFile]:
        """Every file under ``prefix`` (a folder path, '' for all), sorted by path."""

    @abstractmethod
    def read_range(self, path: str, start: int, length: int) -> bytes:
        """``length`` bytes of ``path`` from ``start`` (fewer only at the end of the file)."""

    @abstractmethod
    def exists(self, paths: Sequence[str]) -> dict[str, bool]:
        """For each path, whether a file is there: one request however many paths."""

    @abstractmethod
    def commit(
        self,
        adds: Sequence[Add],
        deletes: Sequence[str] = (),
        *,
        message: str,
        parent: str | None = None,
    ) -> str:
        """Apply adds and deletes as one commit and return its id.

        With ``parent`` the commit lands only if the branch is still there, else
        :class:`CommitConflict`. Nothing is half-applied whatever happens.
        """

    @abstractmethod
    def download(self, path: str, dest: Path) -> Path:
        """Fetch ``path`` into the file ``dest`` (written whole or not at all); returns ``dest``."""

    def read_text(self, path: str) -> str | None:
        """A small file's text, or None when it is not there."""
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        sizes = {f.path: f.size for f in self.list_files(parent)}
        if path not in sizes:
            return None
        return self.read_range(path, 0, sizes[path]).decode("utf-8") if sizes[path] else ""


def normalize_paths(paths: Iterable[str]) -> list[str]:
    """Paths as the hub stores them: no leading slash, no empty segments; '..' refused."""
    out = []
    for p in paths:
        parts = [s for s in p.replace("\\", "/").split("/") if s not in ("", ".")]
        if ".." in parts or not parts:
            raise UsageError(f"bad path in repo: {p!r}")
        out.append("/".join(parts))
    return out

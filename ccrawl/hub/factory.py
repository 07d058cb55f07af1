"""Opening a dataset repo: the hub a repo spec names (HuggingFace, or a local directory), for reading or publishing.

Apart from :mod:`ccrawl.hub.repo` so the interface does not import its implementations (they import it).
"""

from __future__ import annotations

import os
from pathlib import Path

from ccrawl.errors import UsageError
from ccrawl.hub.repo import HUB_ENV, DatasetRepo, require_token, token_from_env


def open_repo(
    repo_id: str,
    *,
    hub: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
) -> DatasetRepo:
    """The repo ``repo_id`` on ``hub``.

    ``hub`` is ``"hf"`` for the HuggingFace Hub (``endpoint`` or ``HF_ENDPOINT`` picks the server) or a
    directory for a local hub; left None it is ``$CCRAWL_HUB`` when set, else the HuggingFace Hub.
    ``token`` defaults to ``$HF_TOKEN`` / ``$HUGGINGFACE_TOKEN``; reads work without one.
    """
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise UsageError(f"--repo {repo_id!r} is not a repo id: write it as owner/name")
    where = hub if hub is not None else os.environ.get(HUB_ENV, "hf")
    if where in ("", "hf", "huggingface"):
        from ccrawl.hub.hfhub import HfRepo

        return HfRepo(repo_id, endpoint=endpoint, token=token if token is not None else token_from_env())
    from ccrawl.hub.localhub import LocalRepo

    return LocalRepo(Path(where).expanduser(), repo_id)


def open_publish_repo(
    repo_id: str, *, hub: str = "", endpoint: str = "", token: str | None = None, no_push: bool = False
) -> DatasetRepo:
    """The repo a publisher writes to, checking the token first when it will push to the Hub.

    A push without ``HF_TOKEN``/``HUGGINGFACE_TOKEN`` raises ``CredentialMissing`` (exit 4) here,
    before the capture directory is read or any request is made.
    """
    where = hub or os.environ.get(HUB_ENV, "") or "hf"
    token = token if token is not None else token_from_env()
    if where in ("hf", "huggingface") and not no_push:
        require_token(token)
    return open_repo(repo_id, hub=where, endpoint=endpoint or None, token=token)

"""What every fake-Hub handler shares: app keys, the LFS rule, oids, errors, auth and fault hooks."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from urllib.parse import unquote

from aiohttp import web

from ccrawl.errors import NothingMatched
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import HubFile
from ccrawl.jsontypes import JSONObject
from ccrawl.testing.fakehub.faults import Faults

LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".gz", ".zst", ".warc", ".safetensors", ".zip", ".tar")
LFS_MIN_SIZE = 10 * 1024 * 1024

KINDS = {"datasets": "dataset", "models": "model"}

ROOT_KEY = web.AppKey("root", Path)
FAULTS_KEY = web.AppKey("faults", Faults)
TOKENS_KEY = web.AppKey("tokens", frozenset)
PAGE_KEY = web.AppKey("page_size", int)
OID_CACHE_KEY = web.AppKey("oid_cache", dict)


def is_lfs(path: str, size: int) -> bool:
    return path.lower().endswith(LFS_SUFFIXES) or size >= LFS_MIN_SIZE


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def error_response(status: int, message: str, code: str | None = None) -> web.Response:
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return web.json_response({"error": message}, status=status, headers=headers)


def _kind(request: web.Request) -> str:
    kind = request.match_info.get("kind", "models")
    if kind not in KINDS:
        raise web.HTTPNotFound(text=f"unknown repo kind {kind}")
    return KINDS[kind]


def repo_of(request: web.Request) -> LocalRepo:
    repo_id = f"{request.match_info['owner']}/{request.match_info['name']}"
    # Old snapshots stay longer than on a local hub: a client resolves "main" to a commit and then
    # downloads by that commit, and a busy fleet can commit several times in between.
    return LocalRepo(request.app[ROOT_KEY], repo_id, repo_type=_kind(request), keep_snapshots=64)


def _token(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth[7:].strip() or None if auth.startswith("Bearer ") else None


def check_write(request: web.Request) -> web.Response | None:
    token = _token(request)
    tokens = request.app[TOKENS_KEY]
    if token is None:
        return error_response(401, "Invalid credentials in Authorization header")
    if tokens and token not in tokens:
        return error_response(403, "You don't have the rights to write to this repo")
    return None


def check_read(request: web.Request, repo: LocalRepo) -> web.Response | None:
    if not repo.exists_repo():
        return error_response(404, f"Repository {repo.repo_id} not found", "RepoNotFound")
    if repo.is_private() and _token(request) is None:
        return error_response(401, f"Repository {repo.repo_id} not found", "RepoNotFound")
    return None


async def stall(request: web.Request, endpoint: str) -> None:
    faults = request.app[FAULTS_KEY]
    faults.count(endpoint)
    delay = faults.stall_for(endpoint)
    if delay:
        await asyncio.sleep(delay)


def revision_of(request: web.Request, repo: LocalRepo) -> str | web.Response:
    rev = unquote(request.match_info.get("rev", "main"))
    try:
        return repo.resolve(rev)
    except NothingMatched:
        return error_response(404, f"Invalid rev id: {rev}", "RevisionNotFound")


def file_entry(request: web.Request, repo: LocalRepo, commit: str, f: HubFile, sha256: str) -> JSONObject:
    """A tree / paths-info entry for one file, with the oids huggingface_hub expects."""
    entry: JSONObject = {"type": "file", "path": f.path, "size": f.size}
    if is_lfs(f.path, f.size):
        entry["oid"] = git_blob_oid(lfs_pointer(sha256, f.size))
        entry["lfs"] = {"oid": sha256, "size": f.size, "pointerSize": len(lfs_pointer(sha256, f.size))}
    else:
        cache: dict[str, str] = request.app[OID_CACHE_KEY]
        if sha256 not in cache:
            cache[sha256] = git_blob_oid(repo.local_path(f.path, commit).read_bytes())
        entry["oid"] = cache[sha256]
    return entry


def folder_entry(path: str, commit: str) -> JSONObject:
    return {"type": "directory", "path": path, "oid": hashlib.sha1(f"{commit}:{path}".encode()).hexdigest()}

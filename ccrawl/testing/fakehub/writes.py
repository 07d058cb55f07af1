"""Fake-Hub handlers that change a repo: create, validate-yaml, preupload, LFS batch and PUT, commit."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
from pathlib import Path

import yaml
from aiohttp import web

from ccrawl.errors import CcrawlError
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, CommitConflict
from ccrawl.jsontypes import JSONObject
from ccrawl.testing.fakehub.base import (
    FAULTS_KEY,
    KINDS,
    ROOT_KEY,
    check_read,
    check_write,
    error_response,
    git_blob_oid,
    is_lfs,
    repo_of,
    stall,
)

# -- repo endpoints --------------------------------------------------------------------------------


async def create_repo(request: web.Request) -> web.Response:
    await stall(request, "create")
    if (denied := check_write(request)) is not None:
        return denied
    body = await request.json()
    kind = body.get("type") or "model"
    owner = body.get("organization") or "user"
    name = body["name"]
    if f"{kind}s" not in KINDS:
        return error_response(400, f"repo type {kind} is not served by the fake Hub")
    repo = LocalRepo(request.app[ROOT_KEY], f"{owner}/{name}", repo_type=kind, keep_snapshots=64)
    prefix = "" if kind == "model" else f"{kind}s/"
    url = f"{request.url.origin()}/{prefix}{owner}/{name}"
    if repo.exists_repo():
        return web.json_response({"error": "You already created this repo", "url": url}, status=409)
    private = bool(body.get("private")) or body.get("visibility") == "private"
    await asyncio.to_thread(repo.create, private=private)
    return web.json_response({"url": url, "name": f"{owner}/{name}", "id": f"{owner}/{name}"})


async def validate_yaml(request: web.Request) -> web.Response:
    await stall(request, "validate")
    body = await request.json()
    content = str(body.get("content", ""))
    match = re.match(r"\A---\n(.*?)\n---\n", content, re.S)
    if match:
        try:
            data = yaml.safe_load(match.group(1))
        except yaml.YAMLError as exc:
            return web.json_response({"errors": [{"message": f"bad YAML: {exc}"}]}, status=400)
        if data is not None and not isinstance(data, dict):
            return web.json_response({"errors": [{"message": "metadata must be a mapping"}]}, status=400)
    return web.json_response({"errors": [], "warnings": []})


async def preupload(request: web.Request) -> web.Response:
    await stall(request, "preupload")
    if (denied := check_write(request)) is not None:
        return denied
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    body = await request.json()
    manifest = repo.manifest()
    files = []
    for f in body.get("files", []):
        path, size = f["path"], int(f["size"])
        lfs = is_lfs(path, size)
        remote = manifest.get(path)
        oid: str | None = None
        if remote is not None:
            oid = remote.sha256 if lfs else git_blob_oid(repo.local_path(path).read_bytes())
        files.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid})
    return web.json_response({"files": files, "commitOid": repo.head()})


# -- LFS ------------------------------------------------------------------------------------------


def _lfs_dir(request: web.Request) -> Path:
    path = request.app[ROOT_KEY] / ".lfs"
    path.mkdir(parents=True, exist_ok=True)
    return path


async def lfs_batch(request: web.Request) -> web.Response:
    await stall(request, "lfs-batch")
    if (denied := check_write(request)) is not None:
        return denied
    body = await request.json()
    store = _lfs_dir(request)
    objects = []
    for obj in body.get("objects", []):
        oid, size = str(obj["oid"]), int(obj["size"])
        entry: JSONObject = {"oid": oid, "size": size, "authenticated": True}
        stored = store / oid
        if not (stored.is_file() and stored.stat().st_size == size):
            entry["actions"] = {"upload": {"href": f"{request.url.origin()}/__lfs/{oid}", "header": {}}}
        objects.append(entry)
    return web.json_response(
        {"transfer": "basic", "objects": objects, "hash_algo": "sha256"},
        content_type="application/vnd.git-lfs+json",
    )


async def lfs_put(request: web.Request) -> web.Response:
    await stall(request, "lfs-put")
    oid = request.match_info["oid"]
    if not re.fullmatch(r"[0-9a-f]{64}", oid):
        return error_response(400, "bad oid")
    store = _lfs_dir(request)
    tmp = store / f".{oid}.{os.getpid()}.{id(request)}.part"
    h = hashlib.sha256()
    with tmp.open("wb") as out:
        async for block in request.content.iter_chunked(1 << 20):
            h.update(block)
            out.write(block)
    if h.hexdigest() != oid:
        tmp.unlink()
        return error_response(400, f"uploaded content does not match oid {oid}")
    os.replace(tmp, store / oid)
    return web.Response(status=200)


# -- commit ---------------------------------------------------------------------------------------


async def commit(request: web.Request) -> web.Response:
    await stall(request, "commit")
    if (denied := check_write(request)) is not None:
        return denied
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    fault = request.app[FAULTS_KEY].commit_fault()
    if fault == 412:
        return error_response(412, "A commit has happened since. Please refresh and try again.")
    if fault is not None:
        return error_response(fault, "injected fault", None)
    lines = [json.loads(line) for line in (await request.read()).splitlines() if line.strip()]
    header: JSONObject = {}
    adds: list[Add] = []
    deletes: list[str] = []
    store = _lfs_dir(request)
    for item in lines:
        key, value = item.get("key"), item.get("value", {})
        if key == "header":
            header = value
        elif key == "file":
            adds.append(Add(value["path"], base64.b64decode(value["content"])))
        elif key == "lfsFile":
            blob = store / value["oid"]
            if not blob.is_file():
                return error_response(422, f"LFS object {value['oid']} for {value['path']} was never uploaded")
            adds.append(Add(value["path"], blob))
        elif key in ("deletedFile", "deletedFolder"):
            deletes.append(value["path"].rstrip("/"))
        else:
            return error_response(400, f"unknown commit operation {key!r}")
    summary = str(header.get("summary") or "commit")
    parent = header.get("parentCommit")
    try:
        oid = await asyncio.to_thread(
            repo.commit, adds, deletes, message=summary, parent=parent if isinstance(parent, str) else None
        )
    except CommitConflict:
        request.app[FAULTS_KEY].count("commit-conflict")  # a real race between writers, not injected
        return error_response(412, "A commit has happened since. Please refresh and try again.")
    except CcrawlError as exc:
        return error_response(400, str(exc))
    prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
    return web.json_response(
        {
            "success": True,
            "commitOid": oid,
            "commitUrl": f"{request.url.origin()}/{prefix}{repo.repo_id}/commit/{oid}",
            "pullRequestUrl": None,
        }
    )

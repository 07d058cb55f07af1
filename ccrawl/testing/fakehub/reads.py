"""Fake-Hub handlers that read a repo: repo info, tree listings (paginated), paths-info and resolve."""

from __future__ import annotations

import re
from urllib.parse import unquote

from aiohttp import web

from ccrawl.hub.repo import HubFile
from ccrawl.jsontypes import JSONObject
from ccrawl.testing.fakehub.base import (
    FAULTS_KEY,
    PAGE_KEY,
    check_read,
    error_response,
    file_entry,
    folder_entry,
    is_lfs,
    repo_of,
    revision_of,
    stall,
)


async def repo_info(request: web.Request) -> web.Response:
    await stall(request, "info")
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    commit = revision_of(request, repo)
    if isinstance(commit, web.Response):
        return commit
    record = repo.commit_record(commit)
    siblings = [{"rfilename": p} for p in sorted(record["files"])]
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(record["time_ms"] / 1000, UTC)
    modified = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return web.json_response(
        {
            "_id": repo.repo_id,
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit,
            "lastModified": modified,
            "createdAt": modified,
            "private": repo.is_private(),
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
        }
    )


# -- listings -------------------------------------------------------------------------------------


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


async def tree(request: web.Request) -> web.Response:
    await stall(request, "tree")
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    commit_id = revision_of(request, repo)
    if isinstance(commit_id, web.Response):
        return commit_id
    base = unquote(request.match_info.get("path", "")).strip("/")
    recursive = _truthy(request.query.get("recursive"))
    manifest = repo.manifest(commit_id)
    under = {p: m for p, m in manifest.items() if not base or p.startswith(base + "/")}
    if base and not under:
        return error_response(404, f"{base} does not exist", "EntryNotFound")
    entries: dict[str, JSONObject] = {}
    for path, meta in sorted(under.items()):
        rel = path[len(base) + 1 :] if base else path
        parts = rel.split("/")
        depth = len(parts) if recursive else 1
        for i in range(1, min(depth, len(parts) - 1) + 1):
            folder = "/".join(([base] if base else []) + parts[:i])
            entries.setdefault(folder, folder_entry(folder, commit_id))
        if recursive or len(parts) == 1:
            entries[path] = file_entry(request, repo, commit_id, HubFile(path, meta.size), meta.sha256)
    ordered = [entries[k] for k in sorted(entries)]
    page_size = request.app[PAGE_KEY]
    cursor = int(request.query.get("cursor", "0") or 0)
    page = ordered[cursor : cursor + page_size]
    headers = {}
    if cursor + page_size < len(ordered):
        next_url = request.url.update_query(cursor=str(cursor + page_size))
        headers["Link"] = f'<{next_url}>; rel="next"'
    return web.json_response(page, headers=headers)


async def paths_info(request: web.Request) -> web.Response:
    await stall(request, "paths-info")
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    commit_id = revision_of(request, repo)
    if isinstance(commit_id, web.Response):
        return commit_id
    form = await request.post()
    paths = [str(p).strip("/") for p in form.getall("paths", [])]
    if not paths and request.content_type == "application/json":
        paths = [str(p).strip("/") for p in (await request.json()).get("paths", [])]
    manifest = repo.manifest(commit_id)
    out = []
    for p in paths:
        if p in manifest:
            out.append(file_entry(request, repo, commit_id, HubFile(p, manifest[p].size), manifest[p].sha256))
        elif any(f.startswith(p + "/") for f in manifest):
            out.append(folder_entry(p, commit_id))
    return web.json_response(out)


# -- downloads ------------------------------------------------------------------------------------


_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


async def resolve(request: web.Request) -> web.StreamResponse:
    await stall(request, "resolve")
    repo = repo_of(request)
    if (denied := check_read(request, repo)) is not None:
        return denied
    commit_id = revision_of(request, repo)
    if isinstance(commit_id, web.Response):
        return commit_id
    path = unquote(request.match_info["path"]).strip("/")
    manifest = repo.manifest(commit_id)
    if path not in manifest:
        return error_response(404, f"Entry not found: {path}", "EntryNotFound")
    meta = manifest[path]
    local = repo.local_path(path, commit_id)
    etag = meta.sha256 if is_lfs(path, meta.size) else file_entry(request, repo, commit_id, HubFile(path, meta.size),
                                                             meta.sha256)["oid"]
    headers = {
        "X-Repo-Commit": commit_id,
        "ETag": f'"{etag}"',
        "Accept-Ranges": "bytes",
        "Content-Type": "application/octet-stream",
    }
    start, end = 0, meta.size - 1
    status = 200
    if (rng := request.headers.get("Range")) is not None:
        m = _RANGE.match(rng.strip())
        if not m or (not m.group(1) and not m.group(2)):
            return error_response(416, f"bad range {rng}")
        if m.group(1):
            start = int(m.group(1))
            end = min(int(m.group(2)), meta.size - 1) if m.group(2) else meta.size - 1
        else:
            start = max(0, meta.size - int(m.group(2)))
        if start >= meta.size or start > end:
            return web.Response(status=416, headers={"Content-Range": f"bytes */{meta.size}", **headers})
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{meta.size}"
    length = end - start + 1 if meta.size else 0
    response = web.StreamResponse(status=status, headers=headers)
    response.content_length = length
    if request.method == "HEAD":
        await response.prepare(request)
        return response
    truncate = request.app[FAULTS_KEY].take_truncate()
    await response.prepare(request)
    with local.open("rb") as f:
        f.seek(start)
        remaining = length // 2 if truncate else length
        while remaining > 0:
            block = f.read(min(remaining, 1 << 16))
            if not block:
                break
            await response.write(block)
            remaining -= len(block)
    if truncate:
        # Promised Content-Length, delivered half: drop the connection the way a reset does.
        if request.transport is not None:
            request.transport.abort()
        return response
    await response.write_eof()
    return response

"""The fake Hub's aiohttp application: the HTTP endpoints huggingface_hub calls, over repos on disk.

Implemented (``<kind>`` is ``datasets`` or ``models``; ``<repo>`` is ``owner/name``)::

    POST /api/repos/create                          create a repo (409 when it exists)
    GET  /api/<kind>/<repo>[/revision/<rev>]        repo info: id, sha, private, siblings
    POST /api/validate-yaml                         README front matter check (create_commit calls it)
    POST /api/<kind>/<repo>/preupload/<rev>         upload mode per file (lfs for data, regular for text)
    POST /<kind>/<repo>.git/info/lfs/objects/batch  LFS batch: an upload action per object not yet stored
    PUT  /__lfs/<oid>                               the LFS upload (sha256 and size are checked)
    POST /api/<kind>/<repo>/commit/<rev>            NDJSON commit; a stale parentCommit answers 412
    GET  /api/<kind>/<repo>/tree/<rev>[/<path>]     listing, recursive or not, paginated by Link header
    POST /api/<kind>/<repo>/paths-info/<rev>        info for many paths in one request
    GET|HEAD /<kind>/<repo>/resolve/<rev>/<path>    file bytes with X-Repo-Commit, ETag, Range support
    GET|POST /__fakehub/faults, GET /__fakehub/stats   fault injection and counters (not Hub API)

Repos are stored through :class:`ccrawl.hub.localhub.LocalRepo` under the server's root, so a commit
here is atomic the same way, and a test can read the result as a plain directory. LFS objects wait in
``<root>/.lfs/<oid>`` until a commit names them. Writes need ``Authorization: Bearer <token>``
(any token unless the server was given a set); reads of a public repo need none.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from ccrawl.testing.fakehub.base import FAULTS_KEY, OID_CACHE_KEY, PAGE_KEY, ROOT_KEY, TOKENS_KEY
from ccrawl.testing.fakehub.faults import Faults
from ccrawl.testing.fakehub.reads import paths_info, repo_info, resolve, tree
from ccrawl.testing.fakehub.writes import commit, create_repo, lfs_batch, lfs_put, preupload, validate_yaml

# -- control --------------------------------------------------------------------------------------


async def faults_endpoint(request: web.Request) -> web.Response:
    faults = request.app[FAULTS_KEY]
    if request.method == "POST":
        body = await request.json()
        if body.pop("clear", False):
            faults.clear()
        faults.add(**body)
    return web.json_response(faults.snapshot())


def make_app(root: Path, *, faults: Faults | None = None, tokens: frozenset[str] = frozenset(),
             page_size: int = 1000) -> web.Application:
    """The fake Hub over ``root``; ``tokens`` limits who may write (empty: any bearer token)."""
    app = web.Application(client_max_size=1 << 34)
    app[ROOT_KEY] = Path(root)
    app[FAULTS_KEY] = faults or Faults()
    app[TOKENS_KEY] = tokens
    app[PAGE_KEY] = page_size
    app[OID_CACHE_KEY] = {}
    repo = "{kind:datasets|models}/{owner}/{name}"
    r = app.router
    r.add_post("/api/repos/create", create_repo)
    r.add_post("/api/validate-yaml", validate_yaml)
    r.add_route("*", "/__fakehub/faults", faults_endpoint)
    r.add_get("/__fakehub/stats", faults_endpoint)
    r.add_put("/__lfs/{oid}", lfs_put)
    r.add_get(f"/api/{repo}", repo_info)
    r.add_get(f"/api/{repo}/revision/{{rev}}", repo_info)
    r.add_post(f"/api/{repo}/preupload/{{rev}}", preupload)
    r.add_post(f"/api/{repo}/commit/{{rev}}", commit)
    r.add_get(f"/api/{repo}/tree/{{rev}}", tree)
    r.add_get(f"/api/{repo}/tree/{{rev}}/{{path:.*}}", tree)
    r.add_post(f"/api/{repo}/paths-info/{{rev}}", paths_info)
    r.add_post("/{kind:datasets|models}/{owner}/{name}.git/info/lfs/objects/batch", lfs_batch)
    r.add_post("/{owner}/{name}.git/info/lfs/objects/batch", lfs_batch)
    r.add_route("GET", "/{kind:datasets}/{owner}/{name}/resolve/{rev}/{path:.*}", resolve)
    r.add_route("HEAD", "/{kind:datasets}/{owner}/{name}/resolve/{rev}/{path:.*}", resolve)
    r.add_route("GET", "/{owner}/{name}/resolve/{rev}/{path:.*}", resolve)
    r.add_route("HEAD", "/{owner}/{name}/resolve/{rev}/{path:.*}", resolve)
    return app

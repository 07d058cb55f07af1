"""The fake Hub answers the real huggingface_hub client the way the Hub does, faults included."""

from __future__ import annotations

import os

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.hf_api import RepoFile, RepoFolder

from ccrawl.testing.fakehub import FakeHub

TOKEN = "hf_fake"
REPO = "acme/things"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[FakeHub]:
    with FakeHub(tmp_path / "root", page_size=2) as h:
        yield h


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO, repo_type="dataset")
    return api


def _commit(api: HfApi, files: dict[str, bytes], deletes: tuple[str, ...] = (), parent: str | None = None) -> str:
    ops: list = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=b) for p, b in files.items()]
    ops += [CommitOperationDelete(path_in_repo=p) for p in deletes]
    info = api.create_commit(REPO, ops, commit_message="test", repo_type="dataset", parent_commit=parent)
    return str(info.oid)


def test_create_commit_and_list_round_trip_through_lfs_and_regular_uploads(hub: FakeHub, api: HfApi) -> None:
    data = os.urandom(5000)
    oid = _commit(api, {"data/a.parquet": data, "README.md": b"---\nlicense: other\n---\n# hi\n", "x/y/z.txt": b"z"})
    assert api.repo_info(REPO, repo_type="dataset").sha == oid
    assert hub.faults.requests["lfs-put"] == 1  # the parquet went through LFS, the text inline
    files = {f.path: f for f in api.list_repo_tree(REPO, repo_type="dataset", recursive=True)}
    assert isinstance(files["data"], RepoFolder)
    assert files["data/a.parquet"].size == 5000
    assert files["data/a.parquet"].lfs is not None
    assert files["data/a.parquet"].lfs.sha256 == __import__("hashlib").sha256(data).hexdigest()
    assert files["README.md"].lfs is None
    assert set(files) == {"data", "data/a.parquet", "README.md", "x", "x/y", "x/y/z.txt"}
    assert hub.local_repo(REPO).snapshot_dir().joinpath("data/a.parquet").read_bytes() == data


def test_tree_listing_is_paginated_with_link_headers(hub: FakeHub, api: HfApi) -> None:
    _commit(api, {f"f{i}.txt": str(i).encode() for i in range(7)})
    before = hub.faults.requests["tree"]
    names = [f.path for f in api.list_repo_tree(REPO, repo_type="dataset")]
    assert names == [f"f{i}.txt" for i in range(7)]
    assert hub.faults.requests["tree"] - before == 4  # page size 2: 2+2+2+1


def test_non_recursive_tree_lists_one_level(api: HfApi) -> None:
    _commit(api, {"a/b/c.txt": b"1", "a/d.txt": b"2", "top.txt": b"3"})
    top = {f.path: type(f).__name__ for f in api.list_repo_tree(REPO, repo_type="dataset")}
    assert top == {"a": "RepoFolder", "top.txt": "RepoFile"}
    under = {f.path for f in api.list_repo_tree(REPO, path_in_repo="a", repo_type="dataset")}
    assert under == {"a/b", "a/d.txt"}


def test_paths_info_answers_many_paths_in_one_request(hub: FakeHub, api: HfApi) -> None:
    _commit(api, {"data/a.parquet": b"PAR1", "ledger/x.csv": b"a\n"})
    before = hub.faults.requests["paths-info"]
    infos = api.get_paths_info(REPO, ["data/a.parquet", "nope.parquet", "ledger", "ledger/x.csv"],
                               repo_type="dataset")
    assert hub.faults.requests["paths-info"] - before == 1
    kinds = {i.path: type(i) for i in infos}
    assert kinds == {"data/a.parquet": RepoFile, "ledger": RepoFolder, "ledger/x.csv": RepoFile}


def test_resolve_sends_repo_commit_etag_and_honours_range(hub: FakeHub, api: HfApi) -> None:
    data = bytes(range(256)) * 10
    oid = _commit(api, {"data/a.parquet": data})
    url = f"{hub.url}/datasets/{REPO}/resolve/main/data/a.parquet"
    head = httpx2.head(url)
    assert head.headers["X-Repo-Commit"] == oid
    assert head.headers["ETag"].strip('"') == __import__("hashlib").sha256(data).hexdigest()
    assert int(head.headers["Content-Length"]) == len(data)
    part = httpx2.get(url, headers={"Range": "bytes=10-19"})
    assert part.status_code == 206
    assert part.content == data[10:20]
    assert part.headers["Content-Range"] == f"bytes 10-19/{len(data)}"
    tail = httpx2.get(url, headers={"Range": "bytes=-4"})
    assert tail.content == data[-4:]
    assert httpx2.get(url, headers={"Range": f"bytes={len(data)}-"}).status_code == 416


def test_hf_hub_download_recovers_from_a_truncated_download(hub: FakeHub, api: HfApi, tmp_path: Path) -> None:
    data = os.urandom(200_000)
    _commit(api, {"data/big.parquet": data})
    hub.faults.add(truncate=1)
    got = hf_hub_download(REPO, "data/big.parquet", repo_type="dataset", endpoint=hub.url, token=TOKEN,
                          local_dir=tmp_path / "dl")
    assert Path(got).read_bytes() == data
    assert hub.faults.injected["truncate"] == 1


def test_a_truncated_response_is_visible_to_a_plain_client(hub: FakeHub, api: HfApi) -> None:
    _commit(api, {"data/big.parquet": os.urandom(100_000)})
    hub.faults.add(truncate=1)
    with pytest.raises(httpx2.RemoteProtocolError):
        httpx2.get(f"{hub.url}/datasets/{REPO}/resolve/main/data/big.parquet")


def test_stale_parent_commit_is_refused_with_412(api: HfApi) -> None:
    first = _commit(api, {"a.txt": b"1"})
    _commit(api, {"b.txt": b"2"})
    with pytest.raises(HfHubHTTPError) as err:
        _commit(api, {"c.txt": b"3"}, parent=first)
    assert err.value.response.status_code == 412


def test_injected_conflict_answers_412_even_with_the_right_parent(hub: FakeHub, api: HfApi) -> None:
    head = _commit(api, {"a.txt": b"1"})
    hub.faults.add(conflicts=1)
    with pytest.raises(HfHubHTTPError) as err:
        _commit(api, {"c.txt": b"3"}, parent=head)
    assert err.value.response.status_code == 412
    assert _commit(api, {"c.txt": b"3"}, parent=head) != head  # the fault was used up


@pytest.mark.parametrize("status", [429, 503])
def test_injected_commit_errors_leave_the_repo_unchanged(hub: FakeHub, api: HfApi, status: int) -> None:
    head = _commit(api, {"a.txt": b"1"})
    hub.faults.add(commit_errors=[status])
    with pytest.raises(HfHubHTTPError) as err:
        _commit(api, {"b.txt": b"2"})
    assert err.value.response.status_code == status
    assert api.repo_info(REPO, repo_type="dataset").sha == head
    assert hub.faults.injected[f"commit:{status}"] == 1


def test_a_stalled_commit_is_held_before_it_is_answered(hub: FakeHub, api: HfApi) -> None:
    hub.faults.add(stalls={"commit": [1.0]})
    started = time.monotonic()
    _commit(api, {"a.txt": b"1"})
    assert time.monotonic() - started >= 1.0


def test_deletes_remove_files_and_folders(api: HfApi) -> None:
    _commit(api, {"a/1.txt": b"1", "a/2.txt": b"2", "b.txt": b"b"})
    _commit(api, {}, deletes=("a/",))
    assert [f.path for f in api.list_repo_tree(REPO, repo_type="dataset", recursive=True)] == ["b.txt"]


def test_writes_need_a_token_and_private_repos_hide_from_anonymous_reads(hub: FakeHub) -> None:
    anonymous = HfApi(endpoint=hub.url, token=False)
    with pytest.raises(HfHubHTTPError) as err:
        anonymous.create_repo("acme/x", repo_type="dataset")
    assert err.value.response.status_code == 401
    HfApi(endpoint=hub.url, token=TOKEN).create_repo("acme/secret", repo_type="dataset", private=True)
    with pytest.raises(RepositoryNotFoundError):
        anonymous.repo_info("acme/secret", repo_type="dataset")


def test_creating_an_existing_repo_is_a_409_that_exist_ok_accepts(hub: FakeHub, api: HfApi) -> None:
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo(REPO, repo_type="dataset")
    assert err.value.response.status_code == 409
    api.create_repo(REPO, repo_type="dataset", exist_ok=True)


def test_invalid_readme_yaml_is_refused_before_any_upload(hub: FakeHub, api: HfApi) -> None:
    with pytest.raises(ValueError, match="Invalid metadata"):
        _commit(api, {"README.md": b"---\nconfigs: [\n---\n", "data/a.parquet": b"PAR1"})
    assert hub.faults.requests["lfs-put"] == 0


def test_faults_can_be_set_over_http_for_a_hub_in_another_process(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccrawl.testing.fakehub", "--port", "0", "--root", str(tmp_path / "r")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        req = urllib.request.Request(f"{url}/__fakehub/faults", data=json.dumps({"commit_errors": [503]}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.load(resp)["queued"]["commit_errors"] == [503]
        api = HfApi(endpoint=url, token=TOKEN)
        api.create_repo(REPO, repo_type="dataset")
        with pytest.raises(HfHubHTTPError) as err:
            _commit(api, {"a.txt": b"1"})
        assert err.value.response.status_code == 503
    finally:
        proc.terminate()
        proc.wait(10)

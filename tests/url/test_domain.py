"""Registered domains, shard keys and shards: PSL test cases, peers on the same list, FNV vectors, parity."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.errors import UsageError
from ccrawl.url import domain
from tests.conftest import native_or_skip
from tests.url.urlgen import any_text, hosts, urls

_CASE = re.compile(r"checkPublicSuffix\((null|'[^']*'), (null|'[^']*')\);")


def _arg(text: str) -> str | None:
    return None if text == "null" else text[1:-1]


def psl_cases(corpus: Path) -> list[tuple[str | None, str | None]]:
    lines = (corpus / "psl" / "test_psl.txt").read_text(encoding="utf-8").splitlines()
    return [(_arg(m.group(1)), _arg(m.group(2))) for m in map(_CASE.match, lines) if m]


class Impl:
    """One implementation's four functions, under the same names."""

    def __init__(
        self,
        registered_domain: Callable[..., Any],
        shard_key: Callable[..., Any],
        shard_of: Callable[..., Any],
        fnv1a64: Callable[..., Any],
    ) -> None:
        self.registered_domain = registered_domain
        self.shard_key = shard_key
        self.shard_of = shard_of
        self.fnv1a64 = fnv1a64


def python_impl() -> Impl:
    return Impl(domain.registered_domain_py, domain.shard_key_py, domain.shard_of_py, domain.fnv1a64_py)


def native_impl() -> Impl:
    native = native_or_skip("domain")
    table = native.SuffixTable(*domain.rules())
    return Impl(table.registered_domain, table.shard_key, table.shard_of, native.fnv1a64)


@pytest.fixture(params=["python", "native"])
def impl(request: pytest.FixtureRequest) -> Impl:
    return python_impl() if request.param == "python" else native_impl()


def test_every_psl_test_case_passes(impl: Impl, corpus_dir: Path) -> None:
    cases = psl_cases(corpus_dir)
    active = [x for x in (corpus_dir / "psl" / "test_psl.txt").read_text().splitlines() if x.startswith("check")]
    assert len(cases) == len(active) > 70, "a PSL test line did not parse"
    wrong = [(host, want, impl.registered_domain(host)) for host, want in cases if impl.registered_domain(host) != want]
    assert wrong == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0xCBF29CE484222325), (b"a", 0xAF63DC4C8601EC8C), (b"foobar", 0x85944171F73967E8)],
)
def test_fnv1a64_matches_the_reference_vectors(impl: Impl, data: bytes, expected: int) -> None:
    assert impl.fnv1a64(data) == expected


def _reference_fnv(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return h


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://a.b.example.co.uk:8080/x?y#z", "example.co.uk"),
        ("WWW.Example.COM.", "example.com"),
        ("user:pw@shop.example.com:443", "example.com"),
        ("https://foo.github.io/repo", "foo.github.io"),  # private section entry
        ("http://食狮.中国/", "xn--85x722f.xn--fiqs8s"),
        ("http://xn--85x722f.xn--fiqs8s/", "xn--85x722f.xn--fiqs8s"),
        ("http://localhost:8000/", "localhost"),
        ("http://192.168.0.1/", "192.168.0.1"),
        ("http://[2001:DB8::1]:80/", "2001:db8::1"),
        ("http://co.uk/", "co.uk"),
        ("", ""),
        ("http:///nohost", ""),
    ],
)
def test_shard_key_is_the_ascii_registered_domain_or_the_host(impl: Impl, url: str, key: str) -> None:
    assert impl.shard_key(url) == key


@pytest.mark.parametrize("n", [1, 3, 7, 32])
def test_shard_is_fnv1a64_of_the_key_modulo_n(impl: Impl, n: int) -> None:
    for url in ("https://a.example.co.uk/x", "http://localhost/", "https://foo.github.io/", "食狮.中国"):
        key = impl.shard_key(url)
        assert impl.shard_of(url, n) == _reference_fnv(key.encode()) % n


def test_hosts_of_one_registered_domain_share_a_shard(impl: Impl) -> None:
    shards = {
        impl.shard_of(u, 32) for u in ("a.example.co.uk", "http://b.example.co.uk/x", "https://example.co.uk:8443")
    }
    assert len(shards) == 1


def test_unparseable_input_is_shard_zero(impl: Impl) -> None:
    assert impl.shard_of("", 7) == 0
    assert impl.shard_of("http://", 7) == 0
    assert impl.shard_of("   ", 7) == 0


def test_shard_count_below_one_is_a_usage_error(impl: Impl) -> None:
    with pytest.raises(UsageError, match="at least 1"):
        impl.shard_of("example.com", 0)


def test_shards_are_close_to_even_over_many_domains(impl: Impl) -> None:
    rng = random.Random(7)
    names = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=rng.randint(3, 12))) for _ in range(30000)}
    counts = Counter(impl.shard_of(f"www.{name}.com", 3) for name in names)
    expected = len(names) / 3
    assert all(abs(c - expected) / expected < 0.03 for c in counts.values()), counts


@pytest.mark.parametrize(
    ("host", "with_private", "icann_only"),
    [
        ("foo.blogspot.com", "foo.blogspot.com", "blogspot.com"),
        ("a.b.github.io", "b.github.io", "github.io"),
        ("x.example.uk.com", "example.uk.com", "uk.com"),
        ("www.example.com", "example.com", "example.com"),
    ],
)
def test_private_entries_are_used_unless_asked_for_icann_only(
    impl: Impl, host: str, with_private: str, icann_only: str
) -> None:
    assert impl.registered_domain(host) == with_private
    assert impl.registered_domain(host, include_private=False) == icann_only


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("example.com.", "example.com"),
        ("https://WWW.Example.com:8080/a", "example.com"),
        ("[::1]:80", None),
        ("1.2.3.4", None),
        ("1.2", None),
        ("a..example.com", None),
        ("localhost", None),
        ("bücher.example.de", "example.de"),
        ("www.bücher.de", "bücher.de"),
        ("www.xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("食狮。中国", "食狮.中国"),  # an ideographic full stop separates labels too
        (None, None),
        ("", None),
    ],
)
def test_registered_domain_handles_ports_ips_idns_and_trailing_dots(
    impl: Impl, host: str | None, expected: str | None
) -> None:
    assert impl.registered_domain(host) == expected


def _sample_hosts_from_the_list(count: int) -> list[str]:
    exact, wildcard, exception = domain.rules()
    rng = random.Random(11)
    out = []
    for rule in rng.sample(sorted(exact), count // 2):
        out.append(f"a.b.{rule}")
    for base in rng.sample(sorted(wildcard), min(len(wildcard), count // 4)):
        out.append(f"a.b.x.{base}")
    for rule in sorted(exception):
        out.append(f"a.{rule}")
    return out


def test_tldextract_on_the_same_list_agrees(tmp_path: Path) -> None:
    import tldextract
    extract = tldextract.TLDExtract(
        suffix_list_urls=(domain.PSL_PATH.as_uri(),),
        cache_dir=str(tmp_path),
        fallback_to_snapshot=False,
        include_psl_private_domains=True,
    )
    for host in _sample_hosts_from_the_list(600):
        result = extract(host)
        theirs = getattr(result, "top_domain_under_public_suffix", None) or result.registered_domain
        ours = domain.registered_domain(host)
        assert (ours or "") == theirs.lower(), host


def test_publicsuffix2_on_the_same_list_agrees() -> None:
    import publicsuffix2
    psl = publicsuffix2.PublicSuffixList(psl_file=str(domain.PSL_PATH))
    for host in _sample_hosts_from_the_list(600):
        if not host.isascii():
            continue  # publicsuffix2 matches Unicode rules against Unicode hosts only
        assert domain.registered_domain(host) == psl.get_sld(host, strict=True), host


@settings(max_examples=300, deadline=None, database=None)
@given(value=st.one_of(hosts(), urls(), any_text))
def test_native_and_twin_agree(value: str) -> None:
    py, native = python_impl(), native_impl()
    assert native.registered_domain(value) == py.registered_domain(value)
    assert native.registered_domain(value, include_private=False) == py.registered_domain(value, include_private=False)
    assert native.shard_key(value) == py.shard_key(value)
    assert native.shard_of(value, 7) == py.shard_of(value, 7)
    assert native.fnv1a64(value.encode("utf-8", "surrogatepass")) == py.fnv1a64(value.encode("utf-8", "surrogatepass"))


def test_the_list_read_is_the_vendored_file_described_by_its_sidecar() -> None:
    from importlib.resources import files

    shipped = files("ccrawl").joinpath("data/psl/public_suffix_list.dat").read_bytes()
    assert domain.PSL_PATH.read_bytes() == shipped
    info = json.loads(domain.PSL_SIDECAR.read_text())
    assert info["sha256"] == hashlib.sha256(shipped).hexdigest()
    assert info["version"] and info["commit"] and info["date"]
    assert f"// VERSION: {info['version']}" in shipped.decode()
    assert domain.psl_info() == info


def test_rule_counts_match_the_sidecar() -> None:
    exact, wildcard, exception = domain.rules()
    info = domain.psl_info()
    assert len(exact) + len(wildcard) + len(exception) == info["rules_icann"] + info["rules_private"]


def test_module_picks_native_unless_disabled() -> None:
    if accel.extensions_disabled():
        assert domain.shard_of is domain.shard_of_py
    else:
        native_or_skip("domain")
        assert domain.shard_of is not domain.shard_of_py


def _suffix_labels_reference(ascii_name: str, include_private: bool = True) -> int:
    """The walk from the left over every suffix (quadratic): what the bounded walk must agree with."""
    exact, wildcard, exception = domain.rules()
    start, labels = 0, ascii_name.count(".") + 1
    while True:
        candidate, dot = ascii_name[start:], ascii_name.find(".", start)
        private = exception.get(candidate)
        if private is not None and (include_private or not private):
            return labels - 1
        private = exact.get(candidate)
        if private is not None and (include_private or not private):
            return labels
        if dot < 0:
            return 1
        private = wildcard.get(ascii_name[dot + 1 :])
        if private is not None and (include_private or not private):
            return labels
        start, labels = dot + 1, labels - 1


_RULE_TAILS = st.sampled_from(["com", "co.uk", "kawasaki.jp", "city.kawasaki.jp", "ck", "www.ck", "github.io", "中国"])


@st.composite
def hostile_hosts(draw: st.DrawFn) -> str:
    """0..300 labels of 0..70 characters (IDN and uppercase among them), dots at the ends, a rule at the end."""
    label = st.one_of(
        st.integers(0, 70).map(lambda n: "a" * n),
        st.text(alphabet="abcXYZ-_0189", max_size=70),
        st.sampled_from(["bücher", "食狮", "ÄÖÜ", "xn--bcher-kva", "WWW", ""]),
    )
    labels = draw(st.lists(label, max_size=300))
    if draw(st.booleans()):
        labels.append(draw(_RULE_TAILS))
    host = ".".join(labels)
    return draw(st.sampled_from(["", ".", ".."])) + host + draw(st.sampled_from(["", ".", ".."]))


@settings(max_examples=300, deadline=None, database=None)
@given(host=hostile_hosts(), as_url=st.booleans())
def test_native_and_twin_agree_on_hostile_hosts(host: str, as_url: bool) -> None:
    value = f"https://{host}:8080/x" if as_url else host
    py, native = python_impl(), native_impl()
    for private in (True, False):
        assert native.registered_domain(value, include_private=private) == py.registered_domain(value, private)
    assert native.shard_key(value) == py.shard_key(value)
    assert native.shard_of(value, 7) == py.shard_of(value, 7)


@settings(max_examples=200, deadline=None, database=None)
@given(
    labels=st.lists(st.sampled_from(["a", "b", "www", "city", "kawasaki", "jp", "ck", "uk", "co", "io"]), max_size=300),
    tail=_RULE_TAILS.filter(str.isascii),
    private=st.booleans(),
)
def test_bounded_suffix_walk_agrees_with_the_walk_over_every_suffix(
    labels: list[str], tail: str, private: bool
) -> None:
    name = ".".join([*labels, tail])
    want = _suffix_labels_reference(name, private)
    assert domain.suffix_labels(name, private) == want
    if not accel.extensions_disabled():
        assert native_impl_table().suffix_labels(name, private) == want


def native_impl_table() -> Any:
    return native_or_skip("domain").SuffixTable(*domain.rules())


@pytest.mark.parametrize(
    ("host", "has_domain"),
    [
        ("a" * 63 + ".com", True),
        ("a" * 64 + ".com", False),  # a label over 63 bytes
        ("www." + "a" * 64 + ".example.com", False),  # wherever it is
        (("a" * 49 + ".") * 5 + "com", True),  # 253 bytes
        (("a" * 49 + ".") * 5 + "com.", True),  # the trailing dot is not counted
        (("a" * 49 + ".") * 5 + "comx", False),  # 254 bytes
        ("x." * 126 + "com", False),  # 255 bytes of one-letter labels
        ("食狮." + "a." * 123 + "com", False),  # 252 characters, 261 bytes in ASCII (xn--85x722f)
        ("a." * 100_000 + "com", False),
    ],
)
def test_a_host_dns_could_not_carry_has_no_registered_domain(impl: Impl, host: str, has_domain: bool) -> None:
    found = impl.registered_domain(host)
    assert (found is not None) == has_domain
    key = impl.shard_key(f"http://{host.upper()}/")
    if has_domain:
        assert key == found
    else:  # the host is its own key, as for an IP address; in ASCII unless DNS could not carry it anyway
        name = host.lower().removesuffix(".")
        assert key == (domain.ascii_host(name) if len(name) <= domain.MAX_HOST_LEN else name)

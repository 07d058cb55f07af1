"""SURT keys: the Internet Archive ``surt`` package is the oracle; native and twin agree everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
import surt as ia_surt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccrawl.errors import InputError
from ccrawl.url import surt as mod
from tests.conftest import native_or_skip
from tests.url.urlgen import EXAMPLE_URLS, any_text, urls

# Every numeric host in EXAMPLE_URLS and urls() is one inet_aton accepts: for the others the
# surt package would ask DNS, and tests never leave loopback.


@pytest.fixture(params=["python", "native"])
def surt_impl(request: pytest.FixtureRequest) -> Callable[[str], str]:
    if request.param == "python":
        return mod.surt_py
    return native_or_skip("surt").surt  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.Example.com/A/b/?B=2&a=1#x", "com,example)/a/b?a=1&b=2"),
        ("https://example.com", "com,example)/"),
        ("http://example.com:8080/x/", "com,example:8080)/x"),
        ("https://example.com:443/", "com,example)/"),
        ("example.com/path?q=1", "com,example)/path?q=1"),
        ("http://a.com/a%2520b/c/../d/./e/?q=%41%2F", "com,a)/a%20b/d/e?q=a/"),
        ("http://192.168.1.1:80/", "1,1,168,192)/"),
        ("http://3232235777/", "1,1,168,192)/"),
        ("http://食狮.中国/x", "xn--fiqs8s,xn--85x722f)/x"),
        ("http://a.com/x?a=1&jsessionid=0123456789abcdef0123456789abcdef", "com,a)/x?&a=1"),
        ("mailto:Foo@Bar.com", "mailto:foo@bar.com"),
    ],
)
def test_surt_matches_common_crawl_surtkeys(surt_impl: Callable[[str], str], url: str, expected: str) -> None:
    assert surt_impl(url) == expected


@pytest.mark.parametrize("url", EXAMPLE_URLS)
def test_surt_agrees_with_the_surt_package_on_examples(surt_impl: Callable[[str], str], url: str) -> None:
    assert surt_impl(url) == ia_surt.surt(url)


_SID = "0123456789abcdef0123456789abcdef"
# The query's session-key scan and the path's dot-segment scan at their edges: a key at the first and
# last byte, cut one byte short, in another case; a "/." or "//" at the path's start and end.
EDGE_URLS = [
    f"http://a.com/x?sid={_SID}", f"http://a.com/x?a=1&sid={_SID}", "http://a.com/x?sid", "http://a.com/x?si",
    f"http://a.com/x?SID={_SID}", f"http://a.com/x?sessionid={_SID}", "http://a.com/x?sessionid",
    "http://a.com/x?sessioni", f"http://a.com/x?b=2&jsessionid={_SID}&a=1", f"http://a.com/x?phpsessid={_SID}",
    "http://a.com/x?cfid=1&cftoken=2", "http://a.com/x?a=1&cfid=1&cftoken=2", "http://a.com/x?cfid", "http://a.com/x?cfid=",
    "http://a.com/x?s", "http://a.com/x?c", "http://a.com/x?ssid=1", "http://a.com/x?ccfid=1&cftoken=2",
    "http://a.com/.", "http://a.com/./", "http://a.com//", "http://a.com/a/", "http://a.com/a//", "http://a.com/a/.",
    "http://a.com/a/..", "http://a.com/a/.b", "http://a.com//a", "http://a.com/a%2F.b", "http://a.com/a%2F%2Fb",
    "http://a.com/a/b./c", "http://a.com/a.b/c",
]


@pytest.mark.parametrize("url", EDGE_URLS)
def test_session_keys_and_dot_segments_at_the_edges_match_the_surt_package(
    surt_impl: Callable[[str], str], url: str
) -> None:
    assert surt_impl(url) == ia_surt.surt(url)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(url=urls())
def test_surt_agrees_with_the_surt_package_on_generated_urls(surt_impl: Callable[[str], str], url: str) -> None:
    assert surt_impl(url) == ia_surt.surt(url)


@settings(max_examples=400, deadline=None, database=None)
@given(url=any_text)
def test_native_and_twin_agree_on_any_text(url: str) -> None:
    native = native_or_skip("surt")
    outcomes = []
    for impl in (mod.surt_py, native.surt):
        try:
            outcomes.append(("ok", impl(url)))
        except InputError as exc:
            outcomes.append(("error", str(exc)))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=300, deadline=None, database=None)
@given(url=urls())
def test_native_and_twin_agree_on_generated_urls(url: str) -> None:
    native = native_or_skip("surt")
    assert native.surt(url) == mod.surt_py(url)


@pytest.mark.parametrize("url", ["", "   ", "\t\n"])
def test_empty_url_is_an_input_error_not_a_dash(surt_impl: Callable[[str], str], url: str) -> None:
    # Divergence: the surt package returns "-" for "" and fails with AttributeError on blanks.
    with pytest.raises(InputError, match="empty URL"):
        surt_impl(url)


@pytest.mark.parametrize("url", ["http://a.com:abc/", "http://a.com:99999/", "http://a.com:-1/"])
def test_bad_port_is_an_input_error(surt_impl: Callable[[str], str], url: str) -> None:
    with pytest.raises(ValueError):
        ia_surt.surt(url)  # the package raises ValueError; we raise our one-line InputError
    with pytest.raises(InputError, match="bad port"):
        surt_impl(url)


def test_numeric_host_inet_aton_rejects_is_kept_as_written(surt_impl: Callable[[str], str]) -> None:
    # The package would ask DNS about 1.2.3.09 (an 8 in octal); without an answer it keeps the name.
    assert surt_impl("http://1.2.3.09/") == "09,3,2,1)/"
    assert surt_impl("http://1.2.3.256/") == "256,3,2,1)/"


def test_lone_surrogate_is_an_input_error(surt_impl: Callable[[str], str]) -> None:
    with pytest.raises(InputError, match="Unicode"):
        surt_impl("http://a.com/\udc80")


def test_filedesc_lines_pass_through(surt_impl: Callable[[str], str]) -> None:
    assert surt_impl("filedesc://IA-001.arc.gz") == ia_surt.surt("filedesc://IA-001.arc.gz")


def test_module_picks_native_unless_disabled() -> None:
    from ccrawl import accel

    if accel.extensions_disabled():
        assert mod.surt is mod.surt_py
    else:
        assert mod.surt is native_or_skip("surt").surt


# Pieces of the hostile shapes (escape chains, session keys, ASP.NET segments) for the one-pass steps.
_PIECES = st.sampled_from(
    [
        *("%", "25", "2", "5", "41", "4", "a", "F", "%2", "&", "=", "x", "/", "(", ")", "/(", "s(", "?", "\n", "\xff"),
        *("cfid=", "&cftoken=", "CFID=", "jsessionid=", "sid=", "PHPSESSID=", "aspsessionid", "abcdefgh="),
        *("A" * 24, "0123456789abcdef" * 2, "a" * 24, ".aspx", ".ASPX"),
    ]
)
_HOSTILE = st.lists(_PIECES, max_size=16).map(lambda parts: "".join(parts).encode("utf-8"))


def _by_regex(patterns: tuple[Any, ...], data: bytes, keep: Callable[[Any], bytes]) -> bytes:
    for pattern in patterns:
        m = pattern.match(data)
        if m:
            data = keep(m)
    return data


@settings(max_examples=2000, deadline=None, database=None)
@given(data=_HOSTILE)
def test_one_pass_steps_equal_the_regexes_and_the_decoding_rounds(data: bytes) -> None:
    rounds = data
    while unquote_to_bytes(rounds) != rounds:
        rounds = unquote_to_bytes(rounds)
    assert mod.unescape_repeatedly(data) == mod._unescape_fixed_point(data) == rounds
    want_query = _by_regex(mod._QUERY_SESSION_PATTERNS, data, lambda m: m.group(1) + (m.group(2) or b""))
    assert mod.strip_query_session_ids(data) == want_query
    want_path = _by_regex(mod._PATH_SESSION_PATTERNS, data, lambda m: m.group(1) + m.group(3))
    assert mod.strip_path_session_ids(data) == want_path


@settings(max_examples=500, deadline=None, database=None)
@given(path=_HOSTILE, query=_HOSTILE)
def test_native_and_twin_agree_on_hostile_paths_and_queries(path: bytes, query: bytes) -> None:
    native = native_or_skip("surt")
    url = "http://a.com/" + path.decode() + "?" + query.decode()
    for value in (url, url.replace("a.com", "%" + path.decode() + "a.com")):
        try:
            want: object = mod.surt_py(value)
        except InputError as exc:
            want = str(exc)
        try:
            got: object = native.surt(value)
        except InputError as exc:
            got = str(exc)
        assert got == want

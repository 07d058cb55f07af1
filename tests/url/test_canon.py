"""canon/1: each step, each tracking-rule form, URL keys, the shipped rules file, native/twin parity."""

from __future__ import annotations

from collections.abc import Callable

import blake3
import pytest
from hypothesis import given, settings

from ccrawl import accel
from ccrawl.errors import InputError
from ccrawl.url import canon
from tests.conftest import native_or_skip
from tests.url.urlgen import EXAMPLE_URLS, any_text, urls


@pytest.fixture(params=["python", "native"])
def canonicalize(request: pytest.FixtureRequest) -> Callable[[str], str]:
    if request.param == "python":
        return canon.canonicalize_py
    rules = canon.tracking_rules()
    native = native_or_skip("canon").Canonicalizer(rules.names, rules.prefixes, rules.token_names)
    return native.canonicalize  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # 1 whitespace trimmed, tab/CR/LF removed
        ("  http://a.com/x\t/y\n ", "http://a.com/x/y"),
        # 2 fragment dropped
        ("http://a.com/x#frag?not=query", "http://a.com/x"),
        # 3 scheme lowercased
        ("HTTPS://a.com/", "https://a.com/"),
        # 4 userinfo dropped
        ("http://user:pw@a.com/", "http://a.com/"),
        # 5 host lowercased, IDNA, trailing dot, percent-decoded; IPv6 compressed
        ("http://WWW.Example.COM./", "http://www.example.com/"),
        ("http://bücher.de/", "http://xn--bcher-kva.de/"),
        ("http://%77ww.a.com/", "http://www.a.com/"),
        ("http://[2001:DB8::0001]:8080/", "http://[2001:db8::1]:8080/"),
        # 6 default port dropped, others without leading zeros, empty port dropped
        ("http://a.com:80/", "http://a.com/"),
        ("https://a.com:443/", "https://a.com/"),
        ("http://a.com:443/", "http://a.com:443/"),
        ("http://a.com:0080/", "http://a.com/"),
        ("http://a.com:/", "http://a.com/"),
        # 7 percent-encoding normalised
        ("http://a.com/%7euser/%2fx?q=%41%2f%zz", "http://a.com/~user/%2Fx?q=A%2F%25zz"),
        ("http://a.com/a b/é?q=<x>", "http://a.com/a%20b/%C3%A9?q=%3Cx%3E"),
        # 9 dot segments removed, empty path is "/"
        ("http://a.com/a/./b/../c", "http://a.com/a/c"),
        ("http://a.com/a/%2e%2e/b", "http://a.com/b"),
        ("http://a.com/../../x", "http://a.com/x"),
        ("http://a.com", "http://a.com/"),
        ("http://a.com?x=1", "http://a.com/?x=1"),
        # 8 session path parameters removed, others kept
        ("http://a.com/x;jsessionid=ABC123?y=1", "http://a.com/x?y=1"),
        ("http://a.com/x;JSESSIONID=ABC;type=a", "http://a.com/x;type=a"),
        # 10 tracking query parameters removed, order and repeats kept
        ("http://a.com/?b=2&utm_source=x&a=1&b=2&fbclid=y", "http://a.com/?b=2&a=1&b=2"),
        # 11 empty query dropped
        ("http://a.com/x?", "http://a.com/x"),
        ("http://a.com/x?utm_medium=email", "http://a.com/x"),
        # 12 trailing slash and case of path and query kept
        ("http://a.com/A/", "http://a.com/A/"),
        ("http://a.com/A", "http://a.com/A"),
        ("http://a.com/p?Q=Z&q=z", "http://a.com/p?Q=Z&q=z"),
    ],
)
def test_each_step_of_canon_1(canonicalize: Callable[[str], str], url: str, expected: str) -> None:
    assert canonicalize(url) == expected


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("gclid=1&id=2", "id=2"),  # name
        ("GCLID=1&id=2", "id=2"),  # name, any case
        ("utm_campaign=x&id=2", "id=2"),  # prefix*
        ("UTM_Whatever=x&id=2", "id=2"),  # prefix*, any case
        ("utm=x", "utm=x"),  # the prefix is utm_, not utm
        ("sid=a1b2c3d4e5f6g7h8&id=2", "id=2"),  # name?: 16 token chars with a digit
        ("sid=ab12-cd34_ef56-gh78&id=2", "id=2"),  # dash and underscore count as token chars
        ("sid=abcdefghijklmnopqrst", "sid=abcdefghijklmnopqrst"),  # no digit: content
        ("sid=a1b2c3d4e5f6g7h", "sid=a1b2c3d4e5f6g7h"),  # 15 chars: content
        ("sid=a1b2c3d4e5f6g7h8.x", "sid=a1b2c3d4e5f6g7h8.x"),  # a dot is not a token char
        ("sid=42", "sid=42"),  # a product id survives
        ("SessionID=0123456789abcdefXYZ", ""),  # name?, any case
        ("utm%5Fsource=x&id=1", "id=1"),  # compared after percent-normalisation
        ("id=1&id=1&utm_source=a&id=1", "id=1&id=1&id=1"),  # repeats kept in place
    ],
)
def test_tracking_rule_forms(canonicalize: Callable[[str], str], query: str, kept: str) -> None:
    expected = "http://a.com/" + (f"?{kept}" if kept else "")
    assert canonicalize(f"http://a.com/?{query}") == expected


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "empty URL"),
        ("ftp://a.com/", "scheme 'ftp'"),
        ("a.com/x", "no scheme"),
        ("mailto:x@a.com", "scheme 'mailto'"),
        ("http:a.com", "no host"),
        ("http:///x", "no host"),
        ("http://a..com/", "bad host"),
        ("http://a com/", "bad host"),
        ("http://a.com:99999/", "bad port"),
        ("http://a.com:x/", "bad port"),
        ("http://a.com:0/", "bad port"),
        ("http://[zz::1]/", "bad IPv6"),
        ("http://%ff.com/", "does not decode"),
    ],
)
def test_not_crawlable_urls_are_input_errors(canonicalize: Callable[[str], str], url: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason):
        canonicalize(url)


def test_url_key_is_blake3_first_ten_bytes_hex() -> None:
    canonical = "https://example.com/"
    assert canon.url_key(canonical) == blake3.blake3(canonical.encode()).digest()[:10].hex()
    assert len(canon.url_key(canonical)) == 20
    assert canon.url_key("https://example.com/a") != canon.url_key("https://example.com/a/")


def test_url_key_of_a_fixed_raw_url_never_changes(canonicalize: Callable[[str], str]) -> None:
    # Pinned: a change here changes published keys, which needs canon/2.
    canonical = canonicalize("HTTP://WWW.Example.com:80/a/./b/?utm_source=x&id=7#top")
    assert canonical == "http://www.example.com/a/b/?id=7"
    assert canon.url_key(canonical) == "dcc6cca7196e31280e9c"


def test_canon_version_is_canon_1() -> None:
    assert canon.CANON_VERSION == "canon/1"


def test_the_rules_read_are_the_shipped_file_byte_for_byte() -> None:
    from importlib.resources import files

    shipped = files("ccrawl").joinpath("data/canon/tracking-params.txt").read_bytes()
    assert canon.TRACKING_PARAMS_PATH.read_bytes() == shipped
    assert canon.tracking_rules() == canon.parse_tracking_rules(shipped.decode("utf-8"))


def test_the_shipped_file_holds_all_three_forms() -> None:
    rules = canon.tracking_rules()
    assert {
        "fbclid",
        "gclid",
        "msclkid",
        "mc_eid",
        "_hsenc",
        "yclid",
        "igshid",
        "jsessionid",
        "phpsessid",
    } <= rules.names
    assert "utm_" in rules.prefixes
    assert {"sid", "sessionid"} <= rules.token_names


def test_parse_tracking_rules_reads_comments_and_forms() -> None:
    rules = canon.parse_tracking_rules("# c\nFoo\n bar* # trailing comment\nbaz?\n\n")
    assert rules == canon.TrackingRules(frozenset({"foo"}), ("bar",), frozenset({"baz"}))
    assert rules.removes("FOO", "") and rules.removes("barx", "1") and not rules.removes("ba", "1")
    assert rules.removes("baz", "0123456789abcdef") and not rules.removes("baz", "0123")


def test_canonical_form_is_a_fixed_point(canonicalize: Callable[[str], str]) -> None:
    for url in EXAMPLE_URLS:
        try:
            once = canonicalize(url)
        except InputError:
            continue
        assert canonicalize(once) == once, url


@settings(max_examples=300, deadline=None, database=None)
@given(url=urls())
def test_canonical_form_of_generated_urls_is_a_fixed_point(url: str) -> None:
    try:
        once = canon.canonicalize_py(url)
    except InputError:
        return
    assert canon.canonicalize_py(once) == once


def _outcome(func: Callable[[str], str], url: str) -> tuple[str, str]:
    try:
        return ("ok", func(url))
    except InputError as exc:
        return ("error", str(exc))


@settings(max_examples=300, deadline=None, database=None)
@given(url=urls())
def test_native_and_twin_agree_on_generated_urls(url: str) -> None:
    rules = canon.tracking_rules()
    native = native_or_skip("canon").Canonicalizer(rules.names, rules.prefixes, rules.token_names)
    assert _outcome(native.canonicalize, url) == _outcome(canon.canonicalize_py, url)


@settings(max_examples=300, deadline=None, database=None)
@given(url=any_text)
def test_native_and_twin_agree_on_any_text(url: str) -> None:
    rules = canon.tracking_rules()
    native = native_or_skip("canon").Canonicalizer(rules.names, rules.prefixes, rules.token_names)
    assert _outcome(native.canonicalize, "http://a.com/" + url) == _outcome(
        canon.canonicalize_py, "http://a.com/" + url
    )
    assert _outcome(native.canonicalize, url) == _outcome(canon.canonicalize_py, url)


@pytest.mark.parametrize("url", EXAMPLE_URLS)
def test_native_and_twin_agree_on_examples(url: str) -> None:
    rules = canon.tracking_rules()
    native = native_or_skip("canon").Canonicalizer(rules.names, rules.prefixes, rules.token_names)
    assert _outcome(native.canonicalize, url) == _outcome(canon.canonicalize_py, url)


def test_module_picks_native_unless_disabled() -> None:
    if accel.extensions_disabled():
        assert canon.canonicalize is canon.canonicalize_py
    else:
        native_or_skip("canon")
        assert canon.canonicalize is not canon.canonicalize_py


@pytest.mark.parametrize("url", ["http://a../", "http://a.b../x", "http://%61..", "http://%C3%A9.."])
def test_a_host_with_two_trailing_dots_is_refused_not_half_stripped(
    canonicalize: Callable[[str], str], url: str
) -> None:
    # Found by the url fuzz target: 'http://%C3%A9..' became 'http://xn--9ca./', which canonicalised
    # again to 'http://xn--9ca/' (a canonical form must be a fixed point).
    with pytest.raises(InputError, match="bad host"):
        canonicalize(url)

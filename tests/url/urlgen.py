"""Hypothesis strategies and example URLs shared by the URL toolkit tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Hand-picked URLs that exercise every branch: case, ports, IDNs, escapes, dot segments, session
# identifiers, numeric hosts, odd schemes, whitespace and broken pieces.
EXAMPLE_URLS = [
    "http://www.Example.com/A/b/?B=2&a=1#x",
    "https://example.com",
    "https://example.com:443/",
    "http://example.com:80/index.html",
    "http://example.com:8080/x/",
    "http://user:pw@www2.example.com:443/",
    "example.com",
    "example.com/path?q=1",
    "HTTP://EXAMPLE.COM/Path/To/Page.HTML?Q=Z",
    "http://xn--fiqs8s.com/",
    "http://食狮.中国/路径?q=é",
    "http://bücher.example/straße",
    "http://a.com/a%2520b/c/../d/./e/?q=%41%2F",
    "http://a.com/..//x//y/../",
    "http://a.com/%7euser/%2e%2e/x%2fy?q=a%20b+c",
    "http://a.com/p?%zz&%2",
    "http://a.com/%",
    "http://%77ww.a%2ecom/",
    "http:////www.vikings.com",
    "http://https://foo.com/x",
    "http://a.com/?jsessionid=0123456789abcdef0123456789abcdef",
    "http://a.com/x?a=1&jsessionid=0123456789abcdef0123456789abcdef",
    "http://a.com/x?PHPSESSID=0123456789abcdef0123456789abcdef&b=2",
    "http://a.com/x?cfid=123&cftoken=456&z=1",
    "http://a.com/x?ASPSESSIONIDQQGGGNCG=LKLDKGFAOBCEKMIPCHHMGKOH",
    "http://a.com/(S(abcdefghijklmnopqrstuvwx))/default.aspx?x",
    "http://a.com/(abcdefghijklmnopqrstuvwx)/default.aspx",
    "http://a.com/x;jsessionid=ABC123;v=2?b=1&a=2&b=1&fbclid=zz",
    "http://a.com/?utm_source=news&utm_medium=email&id=4",
    "http://a.com/x?",
    "http://a.com:/x",
    "http://a.com./a/",
    "http://1.2/",
    "http://010.1.1.1/",
    "http://1.010/",
    "http://0.0.0.0/",
    "http://00.1/",
    "http://192.168.1.1:80/",
    "http://3232235777/",
    "http://4294967297/",
    "http://[::1]:8080/",
    "http://[2001:DB8::0001]/x",
    "mailto:Foo@Bar.com",
    "dns:Example.com",
    "localhost:8080",
    "http://",
    " http://a.b/\tc ",
    'http://a.com/a b"c<d>',
    "http://www.a.com",
    "http://www12.a.com/",
    "http://wwwx.a.com/",
]

_LABEL = st.from_regex(r"[a-zA-Z][a-zA-Z0-9-]{0,8}", fullmatch=True)
_IDN_LABEL = st.sampled_from(["bücher", "食狮", "中国", "пример", "straße", "ÄÖÜ", "café"])
_TLD = st.sampled_from(["com", "co.uk", "org", "de", "jp", "ck", "kobe.jp", "github.io", "blogspot.com", "中国", "xyz"])
_PATH_CHARS = st.sampled_from(
    [*"abcXYZ019-._~!$&'()*+,;=:@%/ \"<>`{}|\\^[]é食", "%41", "%2F", "%2e", "%25", "%zz", "..", "."]
)
_QUERY_NAMES = st.sampled_from(
    [
        "id",
        "q",
        "page",
        "utm_source",
        "UTM_Campaign",
        "fbclid",
        "gclid",
        "sid",
        "SessionID",
        "jsessionid",
        "phpsessid",
        "mc_eid",
        "_hsenc",
        "pk_kwd",
        "ref",
        "s",
        "utm%5Fmedium",
        "",
    ]
)
_QUERY_VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "1",
            "abc",
            "0123456789abcdef0123456789abcdef",
            "a1b2c3d4e5f6g7h8",
            "short1",
            "no-digits-here-at-all",
            "x y",
            "%41",
            "é",
        ]
    ),
    st.text(alphabet="abcXYZ0123456789_-%=+", max_size=20),
)


@st.composite
def hosts(draw: st.DrawFn, idn: bool = True) -> str:
    """Host names with letter-initial labels (never numeric: no DNS question can arise)."""
    labels = draw(st.lists(st.one_of(_LABEL, _IDN_LABEL) if idn else _LABEL, min_size=0, max_size=3))
    if draw(st.booleans()):
        labels.insert(0, draw(st.sampled_from(["www", "WWW", "www2"])))
    host = ".".join([*labels, draw(_TLD)])
    if draw(st.integers(0, 9)) == 0:
        host += "."
    return host


@st.composite
def urls(draw: st.DrawFn, idn: bool = True) -> str:
    """Absolute http(s) URLs built from parts, with the awkward bits the canonicalisers handle."""
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    host = draw(hosts(idn=idn))
    port = draw(st.sampled_from(["", "", "", ":80", ":443", ":8080", ":", ":0081"]))
    userinfo = draw(st.sampled_from(["", "", "user@", "u:p@"]))
    segments = draw(st.lists(st.lists(_PATH_CHARS, max_size=6).map("".join), max_size=4))
    path = "".join("/" + s for s in segments)
    if draw(st.booleans()):
        path += "/"
    if path and draw(st.booleans()):
        path += ";" + draw(st.sampled_from(["jsessionid=ABC123", "v=2", "sid=0123456789abcdef0", "x"]))
    url = f"{scheme}://{userinfo}{host}{port}{path}"
    if draw(st.booleans()):
        fields = draw(st.lists(st.tuples(_QUERY_NAMES, _QUERY_VALUES), max_size=5))
        url += "?" + "&".join(f"{n}={v}" for n, v in fields)
    if draw(st.booleans()):
        url += "#" + draw(st.text("abc/?#", max_size=5))
    return url


# Anything at all, for the twin-parity tests (the implementations must agree even on nonsense).
any_text = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(list(":/?#[]@%.;=&\t\n "))), max_size=60
)

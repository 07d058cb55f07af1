"""RFC 9309 matching, case by case from Google's open-source robots.txt test suite (robots_test.cc).

The crawler asks :class:`ccrawl.fetch.robots.RobotsVerdict` (protego underneath), so these cases
run through the same ``can_fetch`` a crawl uses. Each case names the Google test it comes from.
"""

from __future__ import annotations

import pytest

from ccrawl.fetch.robots import RobotsVerdict, _parse

CASES: list[tuple[str, str, str, str, bool]] = [
    # (google test, robots.txt, agent, url, allowed)
    ("ID_SystemTest_empty", "", "FooBot", "http://foo.bar/", True),
    ("ID_SystemTest_disallow_all", "user-agent: FooBot\ndisallow: /\n", "FooBot", "http://foo.bar/", False),
    ("ID_LineSyntax_Groups foo x", _G := (
        "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\n"
        "allow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"),
     "FooBot", "http://foo.bar/x/b", True),
    ("ID_LineSyntax_Groups foo z (merged group)", _G, "FooBot", "http://foo.bar/z/d", True),
    ("ID_LineSyntax_Groups foo y", _G, "FooBot", "http://foo.bar/y/c", False),
    ("ID_LineSyntax_Groups foo outside any group", _G, "FooBot", "http://foo.bar/foo/bar/", False),
    ("ID_LineSyntax_Groups bar y", _G, "BarBot", "http://foo.bar/y/c", True),
    ("ID_LineSyntax_Groups bar w", _G, "BarBot", "http://foo.bar/w/a", True),
    ("ID_LineSyntax_Groups bar z", _G, "BarBot", "http://foo.bar/z/d", False),
    ("ID_LineSyntax_Groups baz z", _G, "BazBot", "http://foo.bar/z/d", True),
    ("ID_REPLineNamesCaseInsensitive allow", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot",
     "http://foo.bar/x/y", True),
    ("ID_REPLineNamesCaseInsensitive disallow", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot",
     "http://foo.bar/a/b", False),
    ("ID_UserAgentValueCaseInsensitive", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "foo",
     "http://foo.bar/a/b", False),
    ("ID_UserAgentValueCaseInsensitive allow", "user-agent: foo bar\nallow: /x/\ndisallow: /\n", "Foo",
     "http://foo.bar/x/y", True),
    ("ID_GlobalGroups_Secondary star", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "BarBot",
     "http://foo.bar/x/y", True),
    ("ID_GlobalGroups_Secondary specific wins", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n",
     "FooBot", "http://foo.bar/x/y", False),
    ("ID_GlobalGroups_Secondary no group", "user-agent: FooBot\ndisallow: /\n", "BarBot", "http://foo.bar/x/y", True),
    ("ID_AllowDisallow_Value_CaseSensitive", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y",
     False),
    ("ID_AllowDisallow_Value_CaseSensitive upper", "user-agent: FooBot\ndisallow: /X/\n", "FooBot",
     "http://foo.bar/x/y", True),
    ("ID_LongestMatch tie allows", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("ID_LongestMatch longer disallow", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/page.html", False),
    ("ID_LongestMatch only allow matches", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/page", True),
    ("ID_LongestMatch longer allow", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("ID_LongestMatch empty rules", "user-agent: FooBot\nallow: \ndisallow: \n", "FooBot", "http://foo.bar/x/y",
     True),
    ("ID_LongestMatch / tie", "user-agent: FooBot\nallow: /\ndisallow: /\n", "FooBot", "http://foo.bar/page", True),
    ("ID_LongestMatch /x vs /x/", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x",
     False),
    ("ID_LongestMatch /x/ allowed", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/",
     True),
    ("ID_LongestMatch $ tie", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("ID_LongestMatch page$ ", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/page.html", False),
    ("ID_Encoding query", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n",
     "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", True),
    ("ID_Encoding utf-8 rule, encoded url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot",
     "http://foo.bar/foo/bar/%E3%83%84", True),
    ("ID_Encoding encoded rule", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot",
     "http://foo.bar/foo/bar/%E3%83%84", True),
    ("ID_Encoding escaped unreserved rule, literal rule match",
     "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A",
     True),
    ("ID_SpecialCharacters * match", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
     "http://foo.bar/foo/bar/quz", False),
    ("ID_SpecialCharacters * other", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
     "http://foo.bar/foo/quz", True),
    ("ID_SpecialCharacters * empty segment", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n",
     "FooBot", "http://foo.bar/foo//quz", True),
    ("ID_SpecialCharacters $ exact", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
     "http://foo.bar/foo/bar", False),
    ("ID_SpecialCharacters $ longer path", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
     "http://foo.bar/foo/bar/qux", True),
    ("ID_SpecialCharacters $ slash", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
     "http://foo.bar/foo/bar/", True),
    ("ID_SpecialCharacters $ other", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
     "http://foo.bar/foo/bar/baz", True),
    ("ID_SpecialCharacters comment", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot",
     "http://foo.bar/foo/bar", True),
    ("ID_SpecialCharacters comment cut", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n",
     "FooBot", "http://foo.bar/foo/quz", False),
    ("ID_Documentation_Checks /$ root", "User-agent: FooBot\nAllow: /$\nDisallow: /\n", "FooBot", "http://foo.bar/",
     True),
    ("ID_Documentation_Checks /$ page", "User-agent: FooBot\nAllow: /$\nDisallow: /\n", "FooBot",
     "http://foo.bar/page.html", False),
    ("ID_Documentation_Checks *.php", "User-agent: FooBot\nDisallow: /*.php\n", "FooBot",
     "http://foo.bar/folder/filename.php?parameters", False),
    ("ID_Documentation_Checks *.php$ query", "User-agent: FooBot\nDisallow: /*.php$\n", "FooBot",
     "http://foo.bar/filename.php?parameters", True),
    ("ID_Documentation_Checks *.php$", "User-agent: FooBot\nDisallow: /*.php$\n", "FooBot",
     "http://foo.bar/filename.php", False),
    ("ID_Documentation_Checks fish*", "User-agent: FooBot\nDisallow: /fish*.php\n", "FooBot",
     "http://foo.bar/fishheads/catfish.php?parameters", False),
    ("ID_Documentation_Checks Fish case", "User-agent: FooBot\nDisallow: /fish*.php\n", "FooBot",
     "http://foo.bar/Fish.PHP", True),
    ("ID_Documentation_Checks folder", "User-agent: FooBot\nDisallow: /fish/\n", "FooBot", "http://foo.bar/fish",
     True),
    ("ID_Documentation_Checks folder inside", "User-agent: FooBot\nDisallow: /fish/\n", "FooBot",
     "http://foo.bar/fish/salmon.htm", False),
    ("ID_Documentation_Checks prefix", "User-agent: FooBot\nDisallow: /fish\n", "FooBot",
     "http://foo.bar/fishheads/yummy.html", False),
    ("ID_Documentation_Checks prefix no", "User-agent: FooBot\nDisallow: /fish\n", "FooBot",
     "http://foo.bar/catfish", True),
    ("ID_Documentation_Checks allow before disallow order", "User-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot",
     "http://foo.bar/page", True),
    ("ID_Documentation_Checks folder allow", "User-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot",
     "http://foo.bar/folder/page", True),
    ("ID_Documentation_Checks .htm$", "User-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot",
     "http://foo.bar/page.htm", False),
    ("ID_Documentation_Checks /*.htm$ vs /$", "User-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot",
     "http://foo.bar/", True),
]


@pytest.mark.parametrize(("case", "robots", "agent", "url", "allowed"), CASES, ids=[c[0] for c in CASES])
def test_google_robots_case(case: str, robots: str, agent: str, url: str, allowed: bool) -> None:
    verdict = RobotsVerdict(200, _parse(robots), robots.strip() == "", 0.0)
    assert verdict.can_fetch(url, agent) is allowed, case


def test_crawl_delay_is_per_agent_group() -> None:
    rules = _parse("User-agent: *\nCrawl-delay: 2\n\nUser-agent: FooBot\nCrawl-delay: 0.5\nDisallow: /x\n")
    assert RobotsVerdict(200, rules, False, 0.0).crawl_delay("FooBot") == 0.5
    assert RobotsVerdict(200, rules, False, 0.0).crawl_delay("BarBot") == 2.0

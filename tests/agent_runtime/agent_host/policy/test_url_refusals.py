"""The URL rule of ``HttpRequest`` (seed 000 §8.2, 003 §8.3; ``contracts.urls``) and the
``allowedDomains`` entries, refusal by refusal, each asserted by its reason: numeric hosts, IDNA/UTS 46
forms, non-ASCII whitespace and control characters, bracketed IPv6, port limits. Written from the URL
standards (RFC 3986, WHATWG URL's host parser, UTS 46) and what the seed promises: a URL is refused when
two readers could take it to different hosts."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import Allowed, Denied, PolicyBundleInvalid, ToolCallFacts
from agent_runtime.agent_host.policy.domains import DomainRules, normalise_entry
from contracts.enums import ApprovalMode, Capability
from contracts.urls import Host, UrlRejected, canonical_domain, ip_text, parse_url_host
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

BACKSLASH = "the URL contains a backslash"
SPACE = "the URL contains whitespace or control characters"
UNPARSED = "the URL cannot be parsed"
SCHEME = "only http and https URLs are allowed"
NO_HOST = "the URL has no host"
CREDENTIALS = "credentials in URLs are not allowed"
PERCENT = "percent-encoded hosts are not allowed"
IPV6 = "the URL has an invalid IPv6 address"
PORT = "the URL has an invalid port"
NUMERIC = "the host looks like an IP address but is not a valid one"
DOMAIN = "the host is not a valid domain name"
IDN = "the host is not a valid international domain name"
CANONICAL = "the host is not written in its canonical form"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1\\@example.com/", BACKSLASH),
        ("http://example.com\\path", BACKSLASH),
        ("http://exa mple.com/", SPACE),
        ("http://example.com/a b", SPACE),
        ("http://example.com/\t", SPACE),
        ("http://example.com\r\n/", SPACE),
        ("http://example.com/\x7f", SPACE),
        ("http://example.com/\x00", SPACE),
        ("http://example.com\u00a0/", SPACE),  # no-break space (Zs)
        ("http://example.com/\u3000", SPACE),  # ideographic space (Zs)
        ("http://example.com/\u2028", SPACE),  # line separator (Zl)
        ("http://example.com/\u2029", SPACE),  # paragraph separator (Zp)
        ("http://example.com/\u0085", SPACE),  # next line, a C1 control (Cc)
        ("http://exam\u200bple.com/", SPACE),
        ("http://bücher.de/\u00a0", SPACE),  # with other non-ASCII letters around it
        ("http://bücher.de/\x80", SPACE),  # the first C1 control
        (
            "http://bücher.de/\x9f",
            SPACE,
        ),  # the last one  # zero-width space (Cf): invisible in the approval card
        ("http://example.com\u202e/", SPACE),  # right-to-left override (Cf)
        ("http://[::1/", UNPARSED),
        ("http://[127.0.0.1]/", UNPARSED),
        ("ftp://example.com/", SCHEME),
        ("file:///etc/passwd", SCHEME),
        ("javascript:alert(1)", SCHEME),
        ("example.com/path", SCHEME),
        ("//example.com/path", SCHEME),
        ("http:example.com", NO_HOST),
        ("https:/example.com", NO_HOST),
        ("http:///path", NO_HOST),
        ("http://./", NO_HOST),
        ("http://::1/", NO_HOST),
        ("http://user:pass@example.com/", CREDENTIALS),
        ("http://user@example.com/", CREDENTIALS),
        ("http://@example.com/", CREDENTIALS),
        ("http://ex%61mple.com/", PERCENT),
        ("http://[fe80::1%25eth0]/", PERCENT),
        ("http://[v1.x]/", IPV6),
        ("http://[::1]x/", PORT),
        ("http://[::1]:/", PORT),
        ("http://[::1]:0/", PORT),
        ("http://[::1]:65536/", PORT),
        ("http://example.com:/", PORT),
        ("http://example.com:0/", PORT),
        ("http://example.com:65536/", PORT),
        ("http://example.com:123456/", PORT),
        ("http://example.com:+80/", PORT),
        ("http://example.com:-1/", PORT),
        ("http://example.com:8a/", PORT),
        ("http://example.com:٨٠/", PORT),  # Arabic-Indic digits: int() reads them, a socket does not
        ("http://example.com:８０/", PORT),  # full-width digits
        ("http://127.1/", NUMERIC),  # resolvers read 127.1 as 127.0.0.1
        ("http://2130706433/", NUMERIC),  # ...and one number as a whole address
        ("http://0x7f.1/", NUMERIC),
        ("http://0x/", NUMERIC),
        ("http://1.2.3.4.5/", NUMERIC),
        ("http://1.2.3.04/", NUMERIC),  # a leading zero: octal to some readers
        ("http://256.1.1.1/", NUMERIC),
        ("http://example.0x1f/", NUMERIC),
        ("http://example.123/", NUMERIC),
        ("http://a..b.com/", DOMAIN),
        ("http://-a.com/", DOMAIN),
        ("http://a-.com/", DOMAIN),
        ("http://a*.com/", DOMAIN),
        ("http://" + "a" * 64 + ".com/", DOMAIN),  # a label is at most 63 octets
        ("http://" + ("a" * 63 + ".") * 4 + "com/", DOMAIN),  # a name at most 253
        ("http://exa\u0301mple.com/", CANONICAL),  # decomposed: UTS 46 composes it first
        ("http://ｅｘａｍｐｌｅ.com/", CANONICAL),  # full-width letters map to example.com
        ("http://ﬁle.com/", CANONICAL),  # a ligature maps to fi
        ("http://a\u200db.com/", SPACE),  # zero-width joiner (Cf)
        ("http://\u0661.com/", IDN),  # a lone Arabic-Indic digit breaks the bidi rule
    ],
)
def test_a_url_that_names_no_single_host_is_refused_with_its_reason(url: str, reason: str) -> None:
    with pytest.raises(UrlRejected) as caught:
        parse_url_host(url)
    assert str(caught.value).startswith(reason)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://example.com", Host("example.com", is_ip=False)),
        ("HTTPS://EXAMPLE.COM./path?q#f", Host("example.com", is_ip=False)),
        ("http://example.com:1/", Host("example.com", is_ip=False)),
        ("http://example.com:65535/", Host("example.com", is_ip=False)),
        ("http://example.com:080/", Host("example.com", is_ip=False)),
        ("http://a_b.example.com/", Host("a_b.example.com", is_ip=False)),
        ("http://a.b0x1/", Host("a.b0x1", is_ip=False)),
        ("http://10.0.0.1X/", Host("10.0.0.1x", is_ip=False)),  # a name: its last label is not a number
        ("http://bücher.de/ÿ", Host("xn--bcher-kva.de", is_ip=False)),
        ("http://" + "a" * 63 + ".com/", Host("a" * 63 + ".com", is_ip=False)),
        ("http://bücher.de/", Host("xn--bcher-kva.de", is_ip=False)),
        ("http://BÜCHER.de/", Host("xn--bcher-kva.de", is_ip=False)),
        ("http://xn--bcher-kva.de/", Host("xn--bcher-kva.de", is_ip=False)),
        ("http://faß.de/", Host("xn--fa-hia.de", is_ip=False)),  # UTS 46 non-transitional, as browsers
        ("http://a\u3002example.com/", Host("a.example.com", is_ip=False)),  # ideographic full stop
        ("http://example.com/é?ü", Host("example.com", is_ip=False)),  # non-ASCII outside the host
        ("http://127.0.0.1/", Host("127.0.0.1", is_ip=True)),
        ("http://127.0.0.1.:8080/", Host("127.0.0.1", is_ip=True)),
        ("http://[::1]/", Host("::1", is_ip=True)),
        ("http://[::1]:65535/", Host("::1", is_ip=True)),
        ("http://[0:0:0:0:0:0:0:1]/", Host("::1", is_ip=True)),
        ("http://[::FFFF:127.0.0.1]/", Host("::ffff:7f00:1", is_ip=True)),
        ("http://[2001:DB8::1]:443/", Host("2001:db8::1", is_ip=True)),
    ],
)
def test_a_url_names_its_host_in_one_canonical_form(url: str, host: Host) -> None:
    assert parse_url_host(url) == host


def test_canonical_domain_refuses_an_empty_name_and_keeps_a_valid_one() -> None:
    assert canonical_domain("Example.COM.") == "example.com"
    with pytest.raises(UrlRejected, match=f"^{NO_HOST}$"):
        canonical_domain(".")
    assert canonical_domain("x" * 63 + "." + "y" * 63 + "." + "z" * 63 + "." + "w" * 61) == (
        "x" * 63 + "." + "y" * 63 + "." + "z" * 63 + "." + "w" * 61
    )
    with pytest.raises(UrlRejected, match=f"^{DOMAIN}"):
        canonical_domain("x" * 63 + "." + "y" * 63 + "." + "z" * 63 + "." + "w" * 62)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("::1", "::1"),
        ("0:0::1", "::1"),
        ("127.1", None),
        ("0x7f000001", None),
        ("example.com", None),
        ("1.2.3", None),
        ("fe80::1%eth0", "fe80::1%eth0"),
        ("a:b", None),
        ("", None),
    ],
)
def test_ip_text_accepts_only_the_standard_notations(text: str, address: str | None) -> None:
    assert ip_text(text) == address


# ------------------------------------------------------------------ allowedDomains entries


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("example.com", ("example.com", False)),
        ("  Example.COM.  ", ("example.com", False)),
        ("EXAMPLE.COM", ("example.com", False)),
        ("*.example.com", ("example.com", True)),
        ("*.Bücher.de", ("xn--bcher-kva.de", True)),
        ("10.0.0.1", ("10.0.0.1", False)),
        ("[::1]", ("::1", False)),
        ("::1", ("::1", False)),
        ("[2001:DB8::1]", ("2001:db8::1", False)),
    ],
)
def test_an_allowed_domains_entry_is_normalised_like_a_urls_host(
    entry: str, expected: tuple[str, bool]
) -> None:
    assert normalise_entry(entry) == expected


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("", "not a domain name, *.domain or IP address: ''"),
        ("*.", "not a domain name, *.domain or IP address: '*.'"),
        ("*", "not a domain name, *.domain or IP address: '*'"),
        ("*.*.example.com", "not a domain name, *.domain or IP address: '*.*.example.com'"),
        ("example.com/path", "not a domain name, *.domain or IP address: 'example.com/path'"),
        ("example.com:443", "not a domain name, *.domain or IP address: 'example.com:443'"),
        ("user@example.com", "not a domain name, *.domain or IP address: 'user@example.com'"),
        ("exa mple.com", "not a domain name, *.domain or IP address: 'exa mple.com'"),
        ("example.com?", "not a domain name, *.domain or IP address: 'example.com?'"),
        ("example.com#", "not a domain name, *.domain or IP address: 'example.com#'"),
        ("[example.com]", "not a domain name, *.domain or IP address: '[example.com]'"),
        ("[10.0.0.1]", "not a domain name, *.domain or IP address: '[10.0.0.1]'"),  # brackets: IPv6 only
        ("[::1", "not a domain name, *.domain or IP address: '[::1'"),
        ("::1]", "not a domain name, *.domain or IP address: '::1]'"),
        ("[example.com", "not a domain name, *.domain or IP address: '[example.com'"),
        ("*.10.0.0.1", "a wildcard cannot apply to an IP address: *.10.0.0.1"),
        ("*.[::1]", "a wildcard cannot apply to an IP address: *.[::1]"),
        ("127.1", NUMERIC),
        ("a..b", DOMAIN),
    ],
)
def test_an_entry_that_cannot_be_matched_is_refused_with_its_reason(entry: str, reason: str) -> None:
    with pytest.raises(UrlRejected) as caught:
        normalise_entry(entry)
    assert str(caught.value).startswith(reason)


def test_a_bad_domain_entry_is_named_in_the_bundle_error() -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer({"name": "Network.Http", "allowedDomains": ["example.com", "*.10.0.0.1"]})
    assert caught.value.shape.details == {
        "capability": "Network.Http",
        "field": "allowedDomains",
        "entry": "*.10.0.0.1",
    }
    assert caught.value.shape.message == (
        "capabilities[Network.Http].allowedDomains: '*.10.0.0.1' cannot be matched"
        " (a wildcard cannot apply to an IP address: *.10.0.0.1)"
    )


# ------------------------------------------------------------------ matching


def test_a_wildcard_matches_subdomains_at_any_depth_but_not_the_domain_itself() -> None:
    rules = DomainRules(["*.example.com", "api.other.org"])
    assert rules.match(Host("a.example.com", is_ip=False)) == "*.example.com"
    assert rules.match(Host("a.b.c.example.com", is_ip=False)) == "*.example.com"
    assert rules.match(Host("example.com", is_ip=False)) is None
    assert rules.match(Host("badexample.com", is_ip=False)) is None
    assert rules.match(Host("example.com.evil.net", is_ip=False)) is None
    assert rules.match(Host("api.other.org", is_ip=False)) == "api.other.org"
    assert rules.match(Host("x.api.other.org", is_ip=False)) is None
    assert rules.match(Host("other.org", is_ip=False)) is None


def test_a_wildcard_for_a_one_label_suffix_matches_only_below_it() -> None:
    rules = DomainRules(["*.internal"])
    assert rules.match(Host("a.internal", is_ip=False)) == "*.internal"
    assert rules.match(Host("internal", is_ip=False)) is None
    assert rules.match(Host("a.b.internal", is_ip=False)) == "*.internal"


def test_an_ip_entry_matches_only_that_address() -> None:
    rules = DomainRules(["10.0.0.1", "[::1]"])
    assert rules.match(Host("10.0.0.1", is_ip=True)) == "10.0.0.1"
    assert rules.match(Host("::1", is_ip=True)) == "[::1]"
    assert rules.match(Host("10.0.0.2", is_ip=True)) is None
    assert rules.match(Host("::2", is_ip=True)) is None


@pytest.mark.parametrize("entry", ["*.1", "*.0.1", "*.0x1", "*.example.123"])
def test_a_wildcard_over_a_numeric_suffix_is_refused_so_none_can_match_an_ip_host(entry: str) -> None:
    # An IPv4 host ends in a number and an IPv6 host has no dot: a wildcard entry could only match an
    # IP host through a numeric last label, which entries cannot have.
    with pytest.raises(UrlRejected, match=f"^{NUMERIC}"):
        normalise_entry(entry)


def _fetch(url: str) -> ToolCallFacts:
    return ToolCallFacts("HttpRequest", {"url": url})


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        ("https://api.example.com/v1", Allowed),
        ("https://API.EXAMPLE.COM./v1", Allowed),
        ("https://example.com/", Denied("Domain not allowed: example.com")),
        ("https://xn--bcher-kva.example.com/", Allowed),
        ("https://127.1/", Denied(f"URL not allowed: {NUMERIC}: 127.1.")),
        ("https://api.example.com:99999/", Denied(f"URL not allowed: {PORT}.")),
        ("https://api.example.com\u00a0/", Denied(f"URL not allowed: {SPACE}.")),
        ("https://[::1]/", Denied("Domain not allowed: ::1")),
    ],
)
def test_the_enforcer_reports_the_reason_a_url_is_refused(url: str, outcome: object) -> None:
    policy = enforcer({"name": "Network.Http", "allowedDomains": ["*.example.com"]})
    result = policy.check(_fetch(url), Capability.NETWORK_HTTP, now=NOW, approval_mode=ApprovalMode.NEVER)
    if isinstance(outcome, type):
        assert isinstance(result, outcome)
    else:
        assert result == outcome

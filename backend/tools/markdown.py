"""A fetched page as readable Markdown, with markdownify (HTML → Markdown) over Beautiful Soup.

markdownify (MIT) was chosen over html2text (GPL-3.0, which would bind the backend's licence) and the
extraction frameworks (trafilatura, readability-lxml: heavier, lxml-based, built for crawling): it is
maintained, typed, and lets us keep what the agent needs — headings, lists, code blocks, tables, links.
Before conversion the page is reduced to its content: scripts, styles, forms and embedded objects go,
and so do navigation, sidebars and footers; where the page marks its content (``<main>``,
``<article>``) only that is kept. Links and images are made absolute against the page's final URL, so
the agent can follow them; ``data:`` images become their alt text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from markdownify import ATX, STRIP, MarkdownConverter

__all__ = ["Page", "html_to_markdown"]

_NOISE = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "nav",
    "aside",
    "footer",
)
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class Page:
    title: str | None
    markdown: str


def _absolute(base_url: str, url: str) -> str:
    try:
        return urljoin(base_url, url)
    except ValueError:
        return url


def _rewrite_links(content: Tag | BeautifulSoup, base_url: str) -> None:
    for link in content.find_all("a"):
        href = link.get("href")
        if isinstance(href, str) and href and not href.startswith(("#", "javascript:")):
            link["href"] = _absolute(base_url, href)
    for image in content.find_all("img"):
        src = image.get("src")
        if not isinstance(src, str) or src.startswith("data:"):
            alt = image.get("alt")
            image.replace_with(alt if isinstance(alt, str) else "")
        else:
            image["src"] = _absolute(base_url, src)


def html_to_markdown(html: bytes | str, base_url: str, *, encoding: str | None = None) -> Page:
    """The page's title and its content as Markdown. ``encoding``: the charset the server declared; when
    None, Beautiful Soup reads the page's own ``<meta charset>`` or guesses."""
    soup = BeautifulSoup(html, "html.parser", from_encoding=encoding if isinstance(html, bytes) else None)
    title_tag = soup.find("title")
    title = None
    if isinstance(title_tag, Tag):
        title = " ".join(title_tag.get_text().split())
        title_tag.decompose()  # shown as the heading, not again in the text (a page may lack <head>)
    for head in soup.find_all("head"):
        head.decompose()
    for noise in soup.find_all(_NOISE):
        noise.decompose()
    for navigation in soup.select('[role="navigation"]'):
        navigation.decompose()
    content: Tag | BeautifulSoup = soup
    for name in ("main", "article"):
        found = soup.find(name)
        if isinstance(found, Tag) and found.get_text(strip=True):
            content = found
            break
    _rewrite_links(content, base_url)
    converter = MarkdownConverter(heading_style=ATX, bullets="-", strip_document=STRIP)
    markdown = converter.convert_soup(content)
    markdown = _BLANK_LINES.sub("\n\n", markdown).strip()
    return Page(title=title or None, markdown=markdown)

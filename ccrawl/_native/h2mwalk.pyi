"""Stub for the compiled renderer (twin: ccrawl.extract.render.PyRenderer)."""

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ccrawl.extract.model import Budget
from ccrawl.extract.urls import Resolver

class Renderer:
    resolver: Resolver
    budget: Budget
    prune: bool
    root_chars: int
    in_article: bool
    notes: list[str]
    truncated: bool
    stopped: bool
    nodes: int
    chars: int
    link_chars: int
    links: int
    table_cells: int
    flushes: int
    drops: int
    markup: int
    deadline: float
    def __init__(
        self,
        resolver: Resolver,
        budget: Budget,
        *,
        prune: bool,
        root_chars: int = 0,
        started: float | None = None,
    ) -> None: ...
    def render(self, root: LexborNode) -> tuple[str, str]: ...

LOADED: bool

def layout_problem() -> str: ...
def word_count(text: str) -> int: ...
def escape_inline(text: str) -> str: ...
def strip_tags(tree: LexborHTMLParser | LexborNode, tags: list[str]) -> None: ...
def outlinks(hrefs: list[str], resolver: Resolver, limit: int) -> list[str]: ...
def count_lt(data: bytes) -> int: ...

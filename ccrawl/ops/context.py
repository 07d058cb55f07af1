"""What a front end gives every operation besides its parameters: one injected :class:`OpContext`.

The CLI, ``serve`` and ``mcp`` build it from their own configuration (flags, settings,
environment), never from a client's request: an operation declares it as
``ctx: Injected[OpContext | None] = None`` (:mod:`ccrawl.ops.caps`), and the network front ends
refuse a request naming it. It carries

- ``client``: the Common Crawl client's options (:class:`ccrawl.net.options.ClientOptions`, typed,
  durations parsed once);
- ``notice``: where an operation's lines for the user go (stderr at a shell, a frame to a network
  client);
- ``info``: where its progress and summary lines go, when the front end separates them from the notices
  (the CLI's ``-q`` silences these, never the warnings); ``None`` sends them to ``notice``
  (:meth:`OpContext.report`);
- ``command_line``: the command as the user gave it, for provenance (WARC ``warcinfo``, dataset
  metadata); empty when there is none;
- ``hub_endpoint``: the HuggingFace Hub endpoint the server or shell is configured with;
- ``progress``: how a long run shows its progress (``text``, ``json`` or ``none``: a server's runs
  show none, their notices are frames to the client);
- ``handle_signals``: whether a long run may install its own SIGINT/SIGTERM handlers (to checkpoint
  and stop cleanly) — the front end's process decides, not the operation.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ccrawl.net.options import ClientOptions

Notice = Callable[[str], None]
E = TypeVar("E", bound=BaseException)


def stderr_notice(message: str) -> None:
    """The default notice: one line on stderr."""
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class OpContext:
    """The front end's configuration an operation runs with (see the module's text)."""

    client: ClientOptions = field(default_factory=ClientOptions)
    notice: Notice = stderr_notice
    command_line: str = ""
    hub_endpoint: str | None = None
    progress: str = "none"
    handle_signals: bool = True
    info: Notice | None = None

    @classmethod
    def of(cls, client: ClientOptions | Mapping[str, object] | None = None, *, notice: Notice | None = None,
           command_line: str = "", hub_endpoint: str | None = None, progress: str = "none",
           handle_signals: bool = True, info: Notice | None = None) -> OpContext:
        """A context from client options given typed or as a mapping of settings (parsed here)."""
        options = client if isinstance(client, ClientOptions) else ClientOptions.parse(client or {})
        return cls(options, notice or stderr_notice, command_line, hub_endpoint, progress, handle_signals, info)

    def report(self, message: str) -> None:
        """A progress or summary line: to ``info`` when the front end gave one, else to the notice."""
        (self.info or self.notice)(message)

    def client_kwargs(self) -> dict[str, object]:
        """The client options as :class:`~ccrawl.net.client.CCClient` keywords, warnings to the notice
        (for an engine that still takes the client's keywords)."""
        return {**self.client.as_dict(), "warn": self.notice}

    def with_notice(self, notice: Notice) -> OpContext:
        """Every line of the operation's (notices, progress and summaries) to ``notice``."""
        return dataclasses.replace(self, notice=notice, info=None)

    def with_progress(self, progress: str) -> OpContext:
        return dataclasses.replace(self, progress=progress)

    def with_client(self, **changes: object) -> OpContext:
        """The same context with some client options changed (parsed as settings are)."""
        return dataclasses.replace(self, client=self.client.replace(**changes))


def after_stream(exc: E) -> E:
    """Mark ``exc`` as the verdict on a whole stream an operation raises after its last record (exit 3 for
    nothing done, 1 for everything failed): a front end renders the records it has in full, then raises it."""
    exc.after_stream = True  # type: ignore[attr-defined]
    return exc


def is_after_stream(exc: BaseException) -> bool:
    return bool(getattr(exc, "after_stream", False))


def context(ctx: OpContext | None) -> OpContext:
    """``ctx``, or the default context (default client options, notices on stderr) when None."""
    return ctx if ctx is not None else OpContext()

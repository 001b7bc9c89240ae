"""Makes Countersign tools of an MCP server's tools: reads that call it, writes that propose.

Read or write is the owner's decision (``classify``): a tool is a read only when the owner said
so (``--read``), or trusted the server's annotations, the server says ``readOnlyHint`` and
said so when the owner accepted the tool (connecting the source, or reviewing it).
Everything else is a write, built with ``write_tool``: its ``propose`` resolves a card and sends
nothing (a preview, where the server offers one, is a read), and its ``execute`` alone sends the
``tools/call``, with the card id as the idempotency key. The card's sentence is the owner's
(``--sentence``, ``tools.toolsets.mcp.sentence``), else the tool's title on the server named; the model's
words never reach it, and the server is named by its name alone, never where it runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import structlog
from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as McpTool
from pydantic import BaseModel

from tools.caller import Role
from tools.cards.visible import one_line
from tools.errors import ConflictError, NotFoundError, OutcomeUnknownError
from tools.people.tables import Tenant
from tools.proposing.write import write_tool
from tools.tool import PREVIEW, Proposal, ProposalDetail, Result, Scope, Tool, ToolContext
from tools.toolsets.mcp.arguments import arguments_model, sent
from tools.toolsets.mcp.config import IDEMPOTENCY_KEY, SourceConfig, ToolRule, model_name
from tools.toolsets.mcp.connection import (
    NoAnswerError,
    NotSentError,
    ServerError,
    SourceClient,
    unreachable,
)
from tools.toolsets.mcp.reading import read_as_said
from tools.toolsets.mcp.results import shaped
from tools.toolsets.mcp.sentence import as_money, fill, targets_line, unknown
from tools.toolsets.mcp.store import Accepted

__all__ = [
    "Classified",
    "Connect",
    "annotated",
    "classify",
    "read_or_write",
    "sentence_problem",
    "write_form",
]

log = structlog.get_logger("countersign.mcp")

Connect = Callable[[], Awaitable[SourceClient]]
# An argument's money, by its name and value; None where it is not the amount.
Money = Callable[[str, Any], "str | None"]

# What of a preview reaches the card (a result's limits are ``tools.toolsets.mcp.results``').
PREVIEW_CHARS = 1_500


@dataclass(frozen=True, slots=True)
class Classified:
    """What the owner's rules and the server's annotations make of one tool, and why."""

    scope: Scope
    why: str


def classify(config: SourceConfig, tool: McpTool, accepted: Accepted) -> Classified:
    """Read or write, with the reason ``countersign mcp tools`` prints.

    ``accepted``: the tools the owner accepted (when connecting, or by ``countersign mcp
    review``), with what their annotations said then. A tool beyond them is a write until
    reviewed, whatever it claims: a trusted server that later lists a tool marked read-only,
    or marks a write read-only, would otherwise have it run at the model's word, with no card
    and before the owner ever saw it. A read marked a write is a write at once.
    """
    said = config.rule(tool.name).scope
    if said is not None:
        return Classified(said, f"{said}: --{said}")
    if tool.name not in accepted:
        return Classified(Scope.WRITE, "write: new, not yet reviewed")
    found = _by_annotations(config, tool)
    if found.scope is Scope.READ and accepted[tool.name] is not Scope.READ:
        return Classified(Scope.WRITE, "write: now marked readOnlyHint, not yet reviewed")
    return found


def _by_annotations(config: SourceConfig, tool: McpTool) -> Classified:
    hint = tool.annotations.read_only_hint if tool.annotations is not None else None
    if hint is None:
        return Classified(Scope.WRITE, "write: not annotated")
    if not hint:
        return Classified(Scope.WRITE, "write: readOnlyHint false")
    if not config.trust_annotations:
        return Classified(Scope.WRITE, "write: readOnlyHint not trusted (no --trust-annotations)")
    return Classified(Scope.READ, "read: readOnlyHint, annotations trusted")


def annotated(tool: McpTool) -> Scope:
    """What the server's annotations say the tool is, trusted or not: what a review accepts."""
    notes = tool.annotations
    return Scope.READ if notes is not None and notes.read_only_hint is True else Scope.WRITE


def read_or_write(
    config: SourceConfig, tool: McpTool, connect: Connect, accepted: Accepted
) -> Tool | None:
    """The tool as the owner's rules classify it now; None when no model could call it."""
    if classify(config, tool, accepted).scope is Scope.READ:
        return _read(config, tool, connect)
    return write_form(config, tool.name, tool, connect, accepted=accepted)


def write_form(
    config: SourceConfig,
    name: str,
    tool: McpTool | None,
    connect: Connect,
    *,
    accepted: Accepted,
    unreachable: str | None = None,
) -> Tool | None:
    """The tool as a write, whatever it is classified as now: how an approved card runs.

    ``tool`` is None when the server no longer lists ``name`` (or, with ``unreachable``, could
    not be listed): the card then fails at approval saying why, with nothing sent.
    """
    shown = model_name(config.name, name)
    if shown is None:
        return None
    rule = config.rule(name)
    base = _base(config, name, tool, rule, scope_name=shown)
    write = _Write(config, name, tool, rule, connect, accepted=accepted, unreachable=unreachable)
    return write_tool(base, write.propose, write.execute)


def _base(
    config: SourceConfig, name: str, tool: McpTool | None, rule: ToolRule, *, scope_name: str
) -> Tool:
    args = arguments_model(scope_name, tool.input_schema if tool is not None else None)
    editable = tuple(field for field in rule.editable if field in args.model_fields)
    return Tool(
        name=scope_name,
        description=_description(config, tool),
        args=args,
        title=f"{_title(name, tool).lower()} on the {config.name} server",
        role=rule.role or Role.STAFF,
        external=True,
        destructive=tool.annotations.destructive_hint
        if tool is not None and tool.annotations is not None
        else None,
        editable=editable,
        schema=dict(tool.input_schema) if tool is not None else None,
    )


def _read(config: SourceConfig, tool: McpTool, connect: Connect) -> Tool | None:
    shown = model_name(config.name, tool.name)
    if shown is None:
        return None
    rule = config.rule(tool.name)
    base = _base(config, tool.name, tool, rule, scope_name=shown)
    server, name = config.name, tool.name

    async def handler(ctx: ToolContext, args: BaseModel) -> Result:
        connection = await connect()
        try:
            answer = await connection.read(name, sent(args))
        except ServerError as failed:
            raise NotFoundError(f"{_upper(str(failed))}; nothing was read.") from failed
        if answer.is_error:
            raise ConflictError(f"The {server} server answered: {_text(answer, 500)}")
        return await read_as_said(
            ctx, tool, rule, answer, shaped(answer, scope=_scope(ctx, server, name))
        )

    return Tool(
        name=base.name,
        description=base.description,
        args=base.args,
        title=base.title,
        handler=handler,
        role=base.role,
        schema=base.schema,
    )


class _Write:
    """The two halves of one MCP write; only ``execute`` sends the call."""

    def __init__(
        self,
        config: SourceConfig,
        name: str,
        tool: McpTool | None,
        rule: ToolRule,
        connect: Connect,
        *,
        accepted: Accepted,
        unreachable: str | None = None,
    ) -> None:
        self.config, self.name, self.tool, self.rule = config, name, tool, rule
        self.connect, self.accepted, self.unreachable = connect, accepted, unreachable

    @property
    def server(self) -> str:
        return self.config.name

    async def propose(self, ctx: ToolContext, args: BaseModel) -> Proposal:
        if self.unreachable is not None:
            raise NotFoundError(self.unreachable)
        if self.tool is None:
            raise NotFoundError(
                f"The {self.server} server no longer offers {self.name}; nothing was sent."
            )
        values = sent(args)
        money = await self._money(ctx)
        # The server by its name alone: its command line, URL or path is the owner's to read
        # in `countersign mcp list`, and read as noise (or a leak) on every card and audit line.
        details = [
            ProposalDetail("Server", self.server),
            ProposalDetail("Tool", self.name),
            *(
                ProposalDetail(key, _with_money(value, money(key, value)))
                for key, value in values.items()
            ),
        ]
        preview = await self._preview(values, approving=ctx.executing)
        if preview is not None:
            details.append(ProposalDetail(PREVIEW, preview))
        return Proposal(
            summary=self._sentence(values, money),
            details=tuple(details),
            warning=self._warning(),
            args=args,
            target=self._target(values),
            amount=self._amount(values),
            standing=f"nothing was sent to the {self.server} server",
            subject=f"The {self.server} server's {self.name}",
        )

    def _sentence(self, values: Mapping[str, Any], money: Money) -> str:
        """The card's first line: the owner's sentence with the arguments put in, else the
        tool's title on the server, followed by the values of the arguments it targets."""
        title = f"{_title(self.name, self.tool)} on the {self.server} server"
        sentence = self.rule.sentence
        if sentence is not None and self.tool is not None:
            if not sentence_problem(self.config, self.tool):
                return fill(sentence, values, money)
            log.warning(
                "mcp.sentence_refused",
                source=self.server,
                tool=self.name,
                why=sentence_problem(self.config, self.tool),
            )
        return targets_line(title, self.rule.targets, values, money)

    async def _money(self, ctx: ToolContext) -> Money:
        """How the amount argument (``--amount``) reads as money in the merchant's currency."""
        amount, unit = self.rule.amount, self.rule.unit
        currency, locale = ctx.currency, ctx.locale
        if amount and not currency:
            tenant = await ctx.session.get(Tenant, ctx.caller.tenantid)
            if tenant is not None:
                currency, locale = tenant.currency, tenant.locale

        def said(name: str, value: Any) -> str | None:
            if not currency or name != amount:
                return None
            return as_money(value, unit, currency, locale)

        return said

    async def execute(self, ctx: ToolContext, args: BaseModel) -> Result:
        connection = await self.connect()
        meta = {IDEMPOTENCY_KEY: ctx.card_id}
        try:
            answer = await connection.write(self.name, sent(args), meta=meta)
        except NotSentError as failed:
            raise NotFoundError(unreachable(self.server, failed, approving=True)) from failed
        except NoAnswerError as lost:
            raise OutcomeUnknownError(
                f"outcome unknown: {lost} after the call was sent; check the {self.server} "
                "system before asking again"
            ) from lost
        if answer.is_error:
            raise ConflictError(f"the {self.server} server refused it: {_text(answer, 500)}")
        result = shaped(answer, scope=_scope(ctx, self.server, self.name))
        said = _text(answer, 300)
        note = f"done on the {self.server} server" + (f": {said}" if said else "")
        return Result(result.rows, max(result.count, 1), result.scope, note=note)

    async def _preview(self, values: Mapping[str, Any], *, approving: bool) -> str | None:
        """What the server says the call would do, without doing it; None: it cannot say."""
        preview = self.rule.preview
        if preview is None:
            return None
        connection = await self.connect()
        if preview.kind == "dry_run":
            # The write itself, called to say what it would do: only on the word of a schema
            # that has the argument, since a server that ignored it would write without a card.
            self._check_dry_run(preview.name)
            tool, arguments = self.name, {**values, preview.name: True}
        else:
            tool = preview.name
            arguments = await _companion_arguments(
                self.config, connection, tool, values, self.accepted
            )
        try:
            answer = await connection.read(tool, arguments)
        except ServerError as failed:
            raise NotFoundError(unreachable(self.server, failed, approving=approving)) from failed
        if answer.is_error:
            raise ConflictError(
                f"The {self.server} server says this would fail: {_text(answer, 500)}; "
                "nothing was sent."
            )
        return _text(answer, PREVIEW_CHARS) or "(the server's preview was empty)"

    def _check_dry_run(self, argument: str) -> None:
        schema = self.tool.input_schema if self.tool is not None else {}
        spec = (schema.get("properties") or {}).get(argument)
        if not isinstance(spec, dict) or spec.get("type") != "boolean":
            raise ConflictError(
                f"The {self.server} server's {self.name} takes no true/false {argument} "
                "argument, so it cannot preview this; nothing was sent. The owner can change "
                f"the preview with: countersign mcp add … --preview {self.name}=tool:<read tool>"
            )

    def _warning(self) -> str | None:
        notes = self.tool.annotations if self.tool is not None else None
        destructive = notes is None or notes.destructive_hint is not False
        if not destructive and self.config.trust_annotations:
            return None
        if notes is None or notes.destructive_hint is None:
            return (
                f"The {self.server} server does not say this leaves existing data alone: "
                "treat it as able to change or delete it."
            )
        if notes.destructive_hint:
            return f"The {self.server} server marks this as destructive."
        return (
            f"The {self.server} server says this is not destructive, but its annotations "
            "are not trusted."
        )

    def _target(self, values: Mapping[str, Any]) -> str:
        """What the write changes, for one live card per target: the arguments the owner named,
        else every argument a person cannot edit (an edit then replaces the card it edits, and
        the same call asked twice points to the card already waiting)."""
        keys = self.rule.targets or tuple(k for k in values if k not in self.rule.editable)
        named = ",".join(f"{key}={_shown(values.get(key))}" for key in keys)
        if len(named) > 120:
            named = hashlib.sha256(named.encode()).hexdigest()
        return f"mcp:{self.server}:{self.name}:{named}"

    def _amount(self, values: Mapping[str, Any]) -> int | None:
        if self.rule.amount is None or values.get(self.rule.amount) is None:
            return None
        try:
            amount = Decimal(str(values[self.rule.amount]))
        except InvalidOperation:
            return None
        minor = amount * 100 if self.rule.unit == "major" else amount
        return int(abs(minor).quantize(Decimal(1), rounding=ROUND_HALF_UP))


async def _companion_arguments(
    config: SourceConfig,
    connection: SourceClient,
    tool: str,
    values: Mapping[str, Any],
    accepted: Accepted,
) -> dict[str, Any]:
    """The arguments a companion read tool takes, of those the write was given.

    Only a tool the owner's rules make a read may preview: one that writes, called while the
    card is drawn (on the model's path), would change things before anyone approved anything.
    """
    try:
        listed = next((t for t in await connection.tools() if t.name == tool), None)
    except ServerError as failed:
        raise NotFoundError(
            f"{_upper(str(failed))} while preparing the card; nothing was sent."
        ) from failed
    if listed is None or classify(config, listed, accepted).scope is not Scope.READ:
        raise ConflictError(
            f"The {config.name} server's {tool} is not a read by the owner's rules, so it cannot "
            "preview this card; nothing was sent. The owner can mark it --read, or trust the "
            "server's annotations."
        )
    properties = (listed.input_schema or {}).get("properties")
    if not isinstance(properties, dict):
        return dict(values)
    return {key: value for key, value in values.items() if key in properties}


def _scope(ctx: ToolContext, server: str, tool: str) -> str:
    whose = f"{ctx.tenant_name}'s" if ctx.tenant_name else "the merchant's"
    return f"{whose} {server} server, {tool}"


def _title(name: str, tool: McpTool | None) -> str:
    """The tool's own title, else its annotations' title, else its name in words."""
    title = tool.title if tool is not None else None
    if not title and tool is not None and tool.annotations is not None:
        title = tool.annotations.title
    # One line, its hidden characters marked, as every card and audit line shows it: a title
    # is the server's words, and a line break in it drew a line of its own on the card.
    return _upper(one_line(title or name.replace("_", " ").replace("-", " "), 120))


def _description(config: SourceConfig, tool: McpTool | None) -> str:
    """What the model reads about the tool: whose it is, then the server's own words, marked as
    the server's (a hostile server's description is text to read, never an instruction)."""
    own = " ".join((tool.description or "").split())[:1_000] if tool is not None else ""
    head = f"A tool of the merchant's {config.name} server (MCP)."
    return f"{head} The server describes it as: {own}" if own else head


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence_problem(config: SourceConfig, tool: McpTool) -> str | None:
    """Why the owner's sentence for ``tool`` cannot be its card's first line, or None: a
    placeholder the tool's input schema does not take (the card then reads its title)."""
    sentence = config.rule(tool.name).sentence
    missing = unknown(sentence, tool.input_schema) if sentence is not None else []
    if not missing:
        return None
    properties = (tool.input_schema or {}).get("properties")
    takes = ", ".join(sorted(properties)) if isinstance(properties, dict) else ""
    return (
        f"the sentence for {tool.name} names {', '.join('{' + m + '}' for m in missing)}, which "
        f"{tool.name} does not take (it takes {takes or 'no arguments'})"
    )


def _with_money(value: Any, money: str | None) -> str:
    """An argument as sent, and beside it, for the amount, the money it is: "7800.5 (₹7,800.50)"."""
    return f"{_shown(value)} ({money})" if money else _shown(value)


def _shown(value: Any) -> str:
    """An argument as it is sent, whole: text as it is, anything else as its JSON.

    Never cut: Approve sends the whole value, so a card too small for it is refused before it
    is made (``tools.proposing.write``); a value cut here at 1,900 characters sent what nobody saw.
    """
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _text(answer: CallToolResult, limit: int) -> str:
    parts = [part.text for part in answer.content if isinstance(part, TextContent)]
    text = "\n".join(parts).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"

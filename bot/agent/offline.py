"""The offline model: reads a fixed set of phrasings and calls the real tools; never writes itself.

A deterministic pydantic-ai ``FunctionModel``, so the product runs with no API key and tests
script the loop exactly as a real model drives it. Each message either maps to one tool call or
gets an answer straight away; once the tool results come back, it phrases them (``phrasing``).
It goes through the same tools, registry and checks as any model: a write it asks for comes
back as a proposal like any other.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.agent import phrasing
from bot.agent.prompts import unspoken

__all__ = ["OFFLINE_MODEL_NAME", "Call", "normalise", "offline_model", "respond", "understand"]

OFFLINE_MODEL_NAME = "countersign-offline"

Call = tuple[str, dict[str, Any]]
_AMOUNT = r"[₹$€£]?\s?\d[\d,]*(?:\.\d+)?"
_MENTIONS = re.compile(r"^(?:\s*(?:<@[^>]+>|@[\w.\-]+)[\s,:;]*)+")
_EDGES = " \t\r\n.!?,;:"
# "request 6", "req 6", "req. #6": how people write a request's number.
_REQUEST = r"(?:request|req\.?) ?#?(?P<id>\d+)"
# Politeness around a phrasing: "Can you approve request 6 please?", "thanks, orders today".
_POLITE_START = re.compile(
    r"^(?:(?:hi|hey|hello|thanks|thank you|ok|okay)\b[\s,!]*)?"
    r"(?:(?:can|could|would|will) you(?: please)?|please|pls|kindly)\b[\s,]*",
    re.IGNORECASE,
)
_POLITE_END = re.compile(
    r"[\s,]+(?:please|pls|thanks|thank you|thx|ty)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Intent:
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str]], Call | list[Call] | str]


def _intent(pattern: str, build: Callable[[re.Match[str]], Call | list[Call] | str]) -> _Intent:
    return _Intent(re.compile(pattern, re.IGNORECASE), build)


def _with(**values: Any) -> dict[str, Any]:
    """Tool arguments without the ones the person left out (the tool's default applies)."""
    return {key: value for key, value in values.items() if value not in (None, "")}


def _id(digits: str) -> int | str:
    """A number as typed, as an int where Python can read one.

    ``int()`` refuses more than 4,300 digits, and "approve request 999…" with 5,000 nines
    ended the turn in a traceback here. Such a number goes to the tool as the digits typed, and
    the tool's schema answers that it is too large, as it does for any number out of range.
    """
    try:
        return int(digits)
    except ValueError:
        return digits


def _money(text: str | None) -> str | None:
    return text.replace(" ", "").lstrip("₹$€£") if text else None


def _reject(m: re.Match[str]) -> Call | str:
    number = _id(m["id"] or m["bare"])
    if not m["reason"]:
        return f'Tell me why, and I\'ll prepare it: "reject request {number} because …".'
    return "reject_request", {"request_id": number, "reason": m["reason"]}


def _numbers(text: str) -> list[int | str]:
    return [_id(n) for n in re.findall(r"\d+", text)]


def _reject_many(m: re.Match[str]) -> list[Call] | str:
    if not m["reason"]:
        return 'Tell me why, and I\'ll prepare them: "reject requests 4 and 6 because …".'
    return [
        ("reject_request", {"request_id": n, "reason": m["reason"]}) for n in _numbers(m["ids"])
    ]


# "requests 1, 2 and 3", "reqs #4 & #6": several requests, one write each in one turn (one card).
_MANY = r"(?:requests?|reqs?\.?) (?P<ids>#?\d+(?:(?:\s*,\s*|\s*,?\s+(?:and|&)\s+)#?\d+)+)"


def _any_tool(m: re.Match[str]) -> Call | str:
    """ "use ledger__record_payment with supplier_id=SUP-001 amount=7800.50 reference=INV-9":
    any tool the merchant has (its own MCP servers' included), with the arguments as typed."""
    given = (m["args"] or "").strip()
    args = _json_arguments(given) if given.startswith("{") else _word_arguments(given)
    return (m["tool"], args) if isinstance(args, dict) else phrasing.arguments_unreadable(args)


_ONE_TOOL = re.compile(r"(?:use|call) (?P<tool>[A-Za-z0-9_-]+)(?: with (?P<args>.+))?", re.I)


def _any_tools(m: re.Match[str]) -> list[Call] | str:
    """ "use A with …; use B with …": several writes in one turn (one card of several)."""
    calls: list[Call] = []
    for part in m.group(0).split(";"):
        one = _ONE_TOOL.fullmatch(part.strip())
        if one is None:
            return phrasing.arguments_unreadable(f"“{part.strip()}” is not “use <tool> with …”")
        call = _any_tool(one)
        if isinstance(call, str):
            return call
        calls.append(call)
    return calls


def _json_arguments(given: str) -> dict[str, Any] | str:
    try:
        parsed = json.loads(given)
    except json.JSONDecodeError as bad:
        return f"that JSON does not parse ({bad.msg})"
    return parsed if isinstance(parsed, dict) else "the JSON must be an object"


def _word_arguments(given: str) -> dict[str, Any] | str:
    lexer = shlex.shlex(given, posix=True)
    lexer.whitespace += ","  # "a=1, b=2" as well as "a=1 b=2"; a quoted comma stays
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as bad:
        return str(bad)
    args: dict[str, Any] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            return f"“{word}” is not name=value"
        args[key] = _typed(value)
    return args


def _typed(value: str) -> Any:
    """A typed value as JSON reads it (7800.50, true, 3), else the text itself."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return value
    return parsed if isinstance(parsed, int | float | bool) else value


_PERIOD = r"(?P<period>this week|today|last 7 days|this month|last 30 days)"


def _period(said: str | None) -> str:
    return (said or "this week").lower().replace(" ", "_")


_INTENTS = (
    _intent(r"help|\?|what can you do|commands", lambda m: phrasing.HELP),
    _intent(r"(?:use|call) [^;]+(?:;\s*(?:use|call) [^;]+)+", _any_tools),
    _intent(r"(?:use|call) (?P<tool>[A-Za-z0-9_-]+)(?: with (?P<args>.+))?", _any_tool),
    _intent(
        rf"approve {_MANY}(?:[,:]? (?:with note|note|saying):? (?P<note>.+))?",
        lambda m: [
            ("approve_request", _with(request_id=n, note=m["note"])) for n in _numbers(m["ids"])
        ],
    ),
    _intent(rf"reject {_MANY}(?:[,:]? (?:because|reason:?) (?P<reason>.+))?", _reject_many),
    _intent(
        r"(?:show |list )?(?:my|all my) (?:approval )?cards",
        lambda m: ("my_cards", {}),
    ),
    _intent(
        r"(?:what(?:'s| is)|anything) (?:waiting|pending) (?:for|on) me"
        r"|(?:what|which cards) (?:do|should) i (?:need to )?approve",
        lambda m: ("my_cards", {}),
    ),
    _intent(
        r"(?:withdraw|cancel|take back) (?:my |the |that |this )?(?:approval )?(?:card|request)s?",
        lambda m: phrasing.WITHDRAW,
    ),
    _intent(
        r"(?:show |list |any )?(?:the )?(?:pending|open|waiting) (?:branch )?requests",
        lambda m: ("list_requests", {"status": "pending"}),
    ),
    _intent(
        r"(?:show |list )?(?:pending )?requests (?:at|for|in|from) (?P<branch>.+)",
        lambda m: ("list_requests", {"branch": m["branch"]}),
    ),
    _intent(
        rf"(?:(?:show|get|view|open) )?(?:me )?{_REQUEST}",
        lambda m: ("get_request", {"request_id": _id(m["id"])}),
    ),
    _intent(
        rf"approve (?:{_REQUEST}|#?(?P<bare>\d+))"
        r"(?:[,:]? (?:with note|note|saying):? (?P<note>.+))?",
        lambda m: (
            "approve_request",
            _with(request_id=_id(m["id"] or m["bare"]), note=m["note"]),
        ),
    ),
    _intent(
        rf"reject (?:{_REQUEST}|#?(?P<bare>\d+))"
        r"(?:[,:]? (?:because|reason:?) (?P<reason>.+))?",
        _reject,
    ),
    _intent(
        r"(?:(?:show|list|get|any) )?(?:me )?(?:the |all )?(?:recent |latest )?orders"
        r"(?: (?P<today>today))?(?: (?:at|for|in|from) (?P<branch>.+?))?(?: (?P<later>today))?",
        lambda m: (
            "list_orders",
            _with(branch=m["branch"], today=bool(m["today"] or m["later"]) or None),
        ),
    ),
    _intent(r"(?:show |list )?(?:all |our |my )?branches", lambda m: ("list_branches", {})),
    _intent(
        r"close (?:the )?branch (?P<name>.+)",
        lambda m: ("close_branch", {"branch": m["name"]}),
    ),
    _intent(
        r"re-?open (?:the )?branch (?P<name>.+)",
        lambda m: ("reopen_branch", {"branch": m["name"]}),
    ),
    _intent(
        r"(?:(?:show|get|view) )?order #?(?P<id>\d+)",
        lambda m: ("get_order", {"order_id": _id(m["id"])}),
    ),
    _intent(
        rf"refund order #?(?P<id>\d+)(?: (?:for |by )?(?P<amount>{_AMOUNT}))?"
        r"(?:,? because (?P<reason>.+))?",
        lambda m: (
            "refund_order",
            _with(order_id=_id(m["id"]), amount=_money(m["amount"]), reason=m["reason"]),
        ),
    ),
    _intent(
        r"(?:show )?stock(?: levels)? (?:at|in|for) (?P<branch>.+)",
        lambda m: ("stock_levels", {"branch": m["branch"]}),
    ),
    _intent(
        rf"set (?:the )?price (?:of|for) (?P<sku>.+?) to (?P<amount>{_AMOUNT})",
        lambda m: ("set_price", {"sku": m["sku"], "price": _money(m["amount"])}),
    ),
    # Questions the tools answer in other words: the sales summary ranks the branches. Each
    # of these once got "I didn't catch that".
    _intent(
        r"(?:which|what) (?:branch|shop|store|outlet)(?: has| had| did| made)?"
        r"(?: sold| sells| sell| selling)?(?: the)? (?:most|best|highest)(?: sales| business)?"
        rf"(?: {_PERIOD})?",
        lambda m: ("sales_summary", {"period": _period(m["period"])}),
    ),
    _intent(
        rf"(?:our |the )?(?:best|top)(?: selling| performing)? (?:branch|shop|store)(?: {_PERIOD})?",
        lambda m: ("sales_summary", {"period": _period(m["period"])}),
    ),
    # What nothing here can do is said so, with the nearest thing it can do.
    _intent(
        r"(?:(?:what|which)(?:['’]s| is| are)? )?(?:our |the |my )?(?:best|top|most)[ -]?"
        r"(?:selling|sellers?|sold|popular)(?: \w+)*",
        lambda m: phrasing.NO_BEST_SELLERS,
    ),
    _intent(
        r"cancel (?:the )?order #?(?P<id>\d+)",
        lambda m: phrasing.NO_CANCEL.format(id=m["id"]),
    ),
    _intent(
        r"(?:show )?sales (?P<period>this week|today|last 7 days|this month|last 30 days)"
        r"(?: (?:at|for|in) (?P<branch>.+))?",
        lambda m: (
            "sales_summary",
            _with(period=m["period"].lower().replace(" ", "_"), branch=m["branch"]),
        ),
    ),
)


# "tools", "what tools do you have": the answer depends on the merchant, so it is the loop's.
_TOOLS = re.compile(
    r"(?:(?:list|show)(?: me)? |what )?(?:the |your |all |my )?tools(?: do you have| are there)?",
    re.IGNORECASE,
)


def normalise(text: str) -> str:
    """The message without its speaker tag, @mentions, politeness, edge punctuation and doubled
    spaces: "<@U1> Can you approve request 6 please?" is "approve request 6"."""
    text = _MENTIONS.sub("", unspoken(text).strip())
    text = re.sub(r"\s+", " ", text).strip(_EDGES)
    bare = _POLITE_END.sub("", _POLITE_START.sub("", text, count=1)).strip(_EDGES)
    return bare or text


def understand(text: str) -> Call | list[Call] | str:
    """The tool call (or calls, one per request) a message asks for, or the answer to give."""
    said = normalise(text)
    for intent in _INTENTS:
        match = intent.pattern.fullmatch(said)
        if match:
            return intent.build(match)
    return phrasing.NOT_UNDERSTOOD


async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One step of the loop: a tool call for a new message, or words for the results."""
    last = messages[-1]
    results = [
        part
        for part in (last.parts if isinstance(last, ModelRequest) else ())
        if isinstance(part, ToolReturnPart | RetryPromptPart)
    ]
    if results:
        return _text(_phrase_all(results))
    said = _latest_prompt(last)
    known = {definition.name for definition in info.function_tools}
    if _TOOLS.fullmatch(normalise(said)):
        return _text(phrasing.list_tools(sorted(known)))
    decision = understand(said)
    if isinstance(decision, str):
        return _text(decision)
    calls = decision if isinstance(decision, list) else [decision]
    missing = next((tool for tool, _ in calls if tool not in known), None)
    if missing is not None:
        return _text(phrasing.phrase_missing_tool(missing))
    return ModelResponse(parts=[ToolCallPart(tool, args) for tool, args in calls])


def offline_model() -> FunctionModel:
    return FunctionModel(respond, model_name=OFFLINE_MODEL_NAME)


def _phrase_all(results: list[ToolReturnPart | RetryPromptPart]) -> str:
    """The words for one step's results: several writes proposed together are one card, so
    they get one line; each other thing is said once."""
    proposed = [
        row
        for part in results
        if isinstance(part, ToolReturnPart) and part.outcome == "success"
        for row in [phrasing.proposal_row(part.content)]
        if row is not None
    ]
    said = [phrasing.phrase_proposals(proposed)] if len(proposed) > 1 else []
    rest = [p for p in results if len(proposed) < 2 or not _proposal(p)]
    return "\n\n".join(dict.fromkeys([*said, *(_phrase(part) for part in rest)]))


def _proposal(part: ToolReturnPart | RetryPromptPart) -> bool:
    return isinstance(part, ToolReturnPart) and phrasing.proposal_row(part.content) is not None


def _phrase(part: ToolReturnPart | RetryPromptPart) -> str:
    if isinstance(part, RetryPromptPart):
        return phrasing.phrase_failure(part.model_response())
    if part.outcome != "success":
        return phrasing.phrase_failure(part.model_response_str(wrap_if_error=False))
    return phrasing.phrase_result(part.tool_name, part.content)


def _latest_prompt(message: ModelMessage) -> str:
    if isinstance(message, ModelRequest):
        for part in reversed(message.parts):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


def _text(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])

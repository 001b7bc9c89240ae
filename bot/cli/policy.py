"""Shows and changes a merchant's approval policy and time zone; never touches a card already issued."""

from __future__ import annotations

import argparse
from dataclasses import replace
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_tenant
from bot.cli.session import open_database
from bot.settings import Settings
from tools import Policies, Policy, Role, SelfApproval
from tools.toolsets.merchant.models import Tenant
from tools.toolsets.merchant.money import format_money, parse_money

__all__ = ["set_policy", "show_policy", "time_zone"]


async def show_policy(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign policy show <merchant>``."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        policy = await Policies(db).get(tenant.id)
    return _described(tenant, policy, settings.countersign_escalate_after)


async def set_policy(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign policy set <merchant> [--approver-role R] [--two-approvers-from AMOUNT|off] …``."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        policies = Policies(db)
        changed = _changed(await policies.get(tenant.id), args, tenant)
        stored = await policies.put(tenant.id, changed)
    return "Saved. " + _described(tenant, stored, settings.countersign_escalate_after)


_OPTIONS = (
    "approver_role",
    "two_approvers_from",
    "escalate_after",
    "two_approvers_window",
    "self_approval",
)


def _changed(policy: Policy, args: argparse.Namespace, tenant: Tenant) -> Policy:
    if all(getattr(args, option) is None for option in _OPTIONS):
        raise CliError(
            "Nothing to change: give --approver-role, --two-approvers-from, --escalate-after, "
            "--two-approvers-window or --self-approval."
        )
    if args.approver_role is not None:
        policy = replace(policy, approver_role=Role(args.approver_role))
    if args.two_approvers_from is not None:
        policy = replace(policy, two_approvers_from=_amount(args.two_approvers_from, tenant))
    if args.escalate_after is not None:
        policy = replace(policy, escalate_after=args.escalate_after)
    if args.two_approvers_window is not None:
        policy = replace(policy, two_approvers_window=args.two_approvers_window)
    if args.self_approval is not None:
        policy = replace(policy, self_approval=SelfApproval(args.self_approval))
    return policy


def _amount(text: str, tenant: Tenant) -> int | None:
    if text.strip().lower() in {"off", "none", "never"}:
        return None
    try:
        return parse_money(text, tenant.currency)
    except ValueError as bad:
        raise CliError(f"{bad}. Give an amount in {tenant.currency}, like 25000, or off.") from None


def _described(tenant: Tenant, policy: Policy, default_escalation: int) -> str:
    two = (
        f"from {format_money(policy.two_approvers_from, tenant.currency, tenant.locale)}"
        if policy.two_approvers_from is not None
        else "never"
    )
    wait = policy.escalate_after or default_escalation
    origin = "" if policy.escalate_after else " (the service's default)"
    return (
        f"Approval policy of {tenant.name}:\n"
        f"  who approves writes    {policy.approver_role} or above "
        "(or the tool's own role, when higher)\n"
        f"  two approvers needed   {two}\n"
        f"  counted over           {_window_words(policy.two_approvers_window)}\n"
        f"  own requests           {policy.self_approval}: {_SELF_WORDS[policy.self_approval]}\n"
        f"  escalate to the owner  after {wait} seconds{origin}"
    )


_SELF_WORDS = {
    SelfApproval.NOT_OWN_REQUESTS: "nobody approves a request they raised while someone else "
    "could (a person alone still approves their own)",
    SelfApproval.NEVER: "nobody approves a card they asked for, or a request they raised, "
    "while someone else could",
    SelfApproval.ALLOWED: "whoever asks approves their own card when their role is enough",
}


def _window_words(seconds: int) -> str:
    """Over how long the two-approver amount adds up what the same thing already moved."""
    if seconds == 0:
        return "each card's own amount only"
    if seconds % 86400 == 0:
        span = "24 hours" if seconds == 86400 else f"{seconds // 86400} days"
    elif seconds % 3600 == 0:
        span = f"{seconds // 3600} hours" if seconds != 3600 else "hour"
    else:
        span = f"{seconds // 60} minutes" if seconds != 60 else "minute"
    return (
        f"the last {span}: what the same thing already moved (an order's refunds, a "
        "branch's expenses) counts toward the amount"
    )


async def time_zone(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign time-zone <merchant> [<zone>]``: shows or sets whose days "today" is."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        if args.zone is None:
            return f"{tenant.name} keeps the days of {tenant.time_zone}."
        zone = _zone(args.zone)
        async with db.session(write=True) as session, session.begin():
            stored = await session.get(Tenant, tenant.id)
            assert stored is not None  # found just above, and merchants are never deleted
            stored.time_zone = zone
    return f"Saved. {tenant.name} keeps the days of {zone}: today, this week and sales days."


def _zone(text: str) -> str:
    try:
        ZoneInfo(text.strip())
    except (ZoneInfoNotFoundError, ValueError):
        near = sorted(z for z in available_timezones() if text.strip().lower() in z.lower())[:5]
        hint = f" Did you mean {', '.join(near)}?" if near else " Use an IANA name."
        raise CliError(
            f"{text!r} is not a time zone, like Asia/Kolkata or America/New_York.{hint}"
        ) from None
    return text.strip()

"""Shows and changes a merchant's approval policy; never touches a card already issued."""

from __future__ import annotations

import argparse
from dataclasses import replace

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_tenant
from bot.cli.session import open_database
from bot.settings import Settings
from tools.caller import Role
from tools.merchant.models import Tenant
from tools.merchant.money import format_money, parse_money
from tools.policy import Policies, Policy

__all__ = ["set_policy", "show_policy"]


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


def _changed(policy: Policy, args: argparse.Namespace, tenant: Tenant) -> Policy:
    if (
        args.approver_role is None
        and args.two_approvers_from is None
        and args.escalate_after is None
    ):
        raise CliError(
            "Nothing to change: give --approver-role, --two-approvers-from or --escalate-after."
        )
    if args.approver_role is not None:
        policy = replace(policy, approver_role=Role(args.approver_role))
    if args.two_approvers_from is not None:
        policy = replace(policy, two_approvers_from=_amount(args.two_approvers_from, tenant))
    if args.escalate_after is not None:
        policy = replace(policy, escalate_after=args.escalate_after)
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
        f"  escalate to the owner  after {wait} seconds{origin}"
    )

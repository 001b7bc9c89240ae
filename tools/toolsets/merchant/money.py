"""Shows and reads money: integer minor units in, "₹1,25,000.00" out (and back from "1250.50")."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from babel.numbers import format_currency, get_currency_precision

from tools.schema import MAX_MINOR

__all__ = ["format_money", "parse_money"]


def format_money(minor: int, currency: str, locale: str = "en_US") -> str:
    """Formats minor units in the tenant's currency and locale (Indian grouping for en_IN)."""
    digits = get_currency_precision(currency)
    return format_currency(Decimal(minor).scaleb(-digits), currency, locale=locale)


def parse_money(amount: str | int | Decimal, currency: str) -> int:
    """Reads an amount in major units ("1250", "1,250.50", 99.5) into minor units.

    Raises ValueError with a readable message for anything that is not a non-negative amount
    with at most the currency's number of decimals, or that is beyond what a money column holds.
    """
    digits = get_currency_precision(currency)
    text = str(amount).replace(",", "").strip().lstrip("₹$€£").strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{amount!r} is not an amount of money") from None
    if not value.is_finite() or value < 0:
        raise ValueError(f"{amount!r} is not a positive amount of money")
    minor = value.scaleb(digits)
    if minor != minor.to_integral_value():
        raise ValueError(f"{amount!r} has more than {digits} decimals for {currency}")
    if minor > MAX_MINOR:
        # Money columns are 64-bit: a larger amount (the policy's threshold, typed at the
        # command line) would be refused by the database, or overflow SQLite's driver.
        raise ValueError(f"{amount!r} is too large an amount of money")
    return int(minor)

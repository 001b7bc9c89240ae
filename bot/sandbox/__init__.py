"""A local Slack for trying Countersign and for testing it: Web API stand-in, deliveries, web page.

``WebApi`` answers the bot's Web API calls from an in-memory ``Workspace`` (the Slack tests use
it alone); ``Acting`` turns what a person does into the signed requests Slack would send to the
bot; ``run_sandbox`` serves the page beside the real bot for ``make run``.
"""

from bot.sandbox.acting import Acting, ActingError
from bot.sandbox.delivery import Answer, Delivery
from bot.sandbox.people import FIESTA_OPS, FIESTA_TEAM, HARBOR_TEAM, PEOPLE, demo_workspace
from bot.sandbox.runner import Sandbox, run_sandbox, start_sandbox
from bot.sandbox.webapi import BOT_TOKEN, Call, WebApi
from bot.sandbox.workspace import BOT_USER, Message, SlackUser, Workspace

__all__ = [
    "BOT_TOKEN",
    "BOT_USER",
    "FIESTA_OPS",
    "FIESTA_TEAM",
    "HARBOR_TEAM",
    "PEOPLE",
    "Acting",
    "ActingError",
    "Answer",
    "Call",
    "Delivery",
    "Message",
    "Sandbox",
    "SlackUser",
    "WebApi",
    "Workspace",
    "demo_workspace",
    "run_sandbox",
    "start_sandbox",
]

"""Serves the fake Slack Web API from a process of its own, so its work is not charged to the bot.

``python -m bench.slackapi`` starts ``bot.sandbox.WebApi`` with the bench's people on loopback,
prints its base URL on one line, and serves until its stdin closes. Besides Slack's methods it
answers ``GET /bench/calls?method=…``: the parameters of every call of that method so far, as
a JSON list, which is how a bench checks the bot's replies; and ``GET /bench/count?method=…``
(repeatable): how many calls of each method so far, as a JSON object, cheap enough to poll
while the bot works. In production Slack's servers are
elsewhere; with the fake in the bot's own process and event loop, every reply the bot sent was
also parsed, stored and answered on the bot's one core.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter

from aiohttp import web

from bench.stage import fake_slack


async def _serve() -> None:
    async with fake_slack() as slack:

        async def calls(request: web.Request) -> web.Response:
            return web.json_response(slack.called(request.query["method"]))

        seen: Counter[str] = Counter()
        tallied = 0

        async def count(request: web.Request) -> web.Response:
            # Only the calls since the last poll are tallied: polled every few milliseconds
            # through a burst, rescanning them all would load the core the bot also runs on.
            nonlocal tallied
            new = slack.calls[tallied:]
            seen.update(call.method for call in new)
            tallied += len(new)
            return web.json_response({m: seen[m] for m in request.query.getall("method", [])})

        # Beside the fake's own routes, on a runner of its own (the fake's app is frozen).
        app = web.Application()
        app.router.add_get("/bench/calls", calls)
        app.router.add_get("/bench/count", count)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        print(slack.base_url, f"http://127.0.0.1:{port}/bench/calls", flush=True)
        loop = asyncio.get_running_loop()
        try:
            # Serves until the bench closes our stdin (or dies, which closes it too).
            await loop.run_in_executor(None, sys.stdin.read)
        finally:
            await runner.cleanup()


def main() -> None:
    asyncio.run(_serve())


if __name__ == "__main__":
    main()

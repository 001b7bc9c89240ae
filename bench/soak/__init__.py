"""The chaos soak (``make soak``): nothing lost and nothing twice while faults come together.

Three ``countersign serve`` processes on one PostgreSQL, behind a round-robin proxy, all on
loopback, take a load that proposes, approves, rejects, double-presses, edits, batches and
makes two-approver cards through the fake Slack Web API; meanwhile servers are killed outright
and restarted, PostgreSQL is restarted with ``-m immediate``, and once every free connection
slot is taken during a burst. Then the merchant's MCP server (the demo ledger) is killed
mid-call at each approved payment (``bench.soak.mcp``). At the end the database, the fake
Slack and the ledger are checked (``bench.soak.checks``) and one line says what was found.
"""

__all__: list[str] = []

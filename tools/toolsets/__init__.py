"""The tools a merchant's catalogue offers: the reference toolset over a merchant's data
(``merchant``), the merchants' own MCP servers (``mcp``) and the card reads (``cards``)."""

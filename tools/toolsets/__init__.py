"""The tools a merchant's catalogue offers; each proposes writes and never runs one itself.

``merchant`` is the reference toolset over a merchant's data (and ``build_registry``), ``mcp``
the merchants' own MCP servers as a source of tools, and ``cards`` the reads of a person's live
cards. They sit on top of the engine: each builds on the registry's shapes, and nothing in the
engine imports them.
"""

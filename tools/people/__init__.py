"""Who is who, and who is issued a card; nothing here proposes or decides one.

``tables`` holds the merchants, their people and their chat identities; ``connections`` which
merchant each chat installation belongs to; ``directory`` maps a chat identity to a person;
``mcp_tokens`` the personal tokens of ``/mcp``; ``consents`` and ``grants`` (over
``grant_tables``) the agents connected to ``/mcp`` by OAuth, each allowed by its person; ``policy`` who may countersign a merchant's
writes; ``routing`` turns the policy into the people one card is issued to.
"""

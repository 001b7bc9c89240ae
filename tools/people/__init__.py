"""Merchants, their people and identities, who may countersign, and to whom a card is
issued; nothing here proposes or decides a card."""

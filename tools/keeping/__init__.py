"""What the bot asks of cards besides deciding them; never runs a write.

``door`` is the registry's card-keeping half, over ``showing`` (which decided cards are still to
be shown, and which process shows each), ``sweeping`` (expiry and escalation) and ``reconcile``
(cards a stopped process left executing).
"""

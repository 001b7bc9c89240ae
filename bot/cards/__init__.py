"""What a card is and what it says, surface-neutral: the model, its spec and its words; never shows one.

``card`` reads a card whole (one write or several), ``cardspec`` and ``several`` describe it
once for every renderer, ``wording`` holds the sentences. Nothing here talks to a platform or
decides a press.
"""

__all__: list[str] = []

"""What a card is, where it is kept, how it is signed, what it may show; never decides a card.

``record`` is a card as a value, ``store`` keeps cards and moves each by one conditional UPDATE,
``tokens`` signs and verifies what a button carries, ``visible`` marks what a card cannot show
and measures what it may hold, and ``lease`` names the process that holds a card while it runs.
Everything above builds on these; they import only the database, the caller and the errors.
"""

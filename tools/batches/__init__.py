"""Several cards of one turn shown as one batch with one token, and decided with one press,
each card through its own single-card path."""

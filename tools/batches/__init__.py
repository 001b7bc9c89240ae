"""Several cards of one turn as one batch: one token, one press; never a path of its own to a write.

``grouping`` joins the cards into a batch under the strictest approval any of them needs;
``deciding`` takes each of them through the single-card path of ``tools.approving``.
"""

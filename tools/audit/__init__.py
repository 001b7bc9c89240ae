"""The audit log and the thumbs people give answers; rows are appended, never edited.

``log`` writes every call, proposal, refusal, decision and outcome; ``feedback`` keeps a
person's rating of one answer as an audit row of its own.
"""

"""The audit log and the thumbs people give answers; rows are appended, never edited."""

"""The reference toolset over a merchant's data: reads that answer, writes that propose."""

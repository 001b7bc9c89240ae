"""What the command-line tests share: a demo database of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.databases import Templates


@pytest.fixture
def demo_url(templates: Templates, tmp_path: Path) -> str:
    """A migrated SQLite file holding the demo data (what `countersign demo` makes)."""
    return templates.sqlite_copy(tmp_path)

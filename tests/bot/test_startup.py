"""What a server imports at start-up: only the surface and the model it is configured for.

Each `countersign serve`, each worker and the sandbox pay for their imports before they answer
anything; the tests start them by the dozen. Checked in a fresh interpreter, as a process starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.databases import Templates

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

_ROOT = Path(__file__).resolve().parents[2]
_HEAVY = ("microsoft_agents", "msal", "openai", "anthropic", "slack_bolt", "pydantic_ai")

# Builds the app a Slack-only server with the offline model serves, then names the heavy
# packages the interpreter loaded on the way.
_SLACK_ONLY = """
import json, sys
from pydantic import SecretStr
from bot.server import application, build_services
from bot.settings import Settings
from tools.db import Database

configured = Settings(
    _env_file=None,
    slack_bot_token=SecretStr("xoxb-not-used"),
    slack_signing_secret=SecretStr("signing-secret-not-used"),
    slack_api_url="http://127.0.0.1:1/api/",
    countersign_secret=SecretStr("card-secret-for-start-up-tests-0123456789"),
    countersign_model="offline",
    database_url=sys.argv[1],
)
application(configured, build_services(configured, Database(sys.argv[1])))
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[2:]))))
"""


@pytest.fixture
def loaded(backend: str, templates: Templates, tmp_path: Path) -> set[str]:
    """The heavy packages a Slack-only server with the offline model has loaded once built."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _SLACK_ONLY, templates.sqlite_copy(tmp_path), *_HEAVY],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return set(json.loads(done.stdout))


def test_a_slack_only_server_never_imports_the_teams_sdk(loaded: set[str]) -> None:
    """Slack and the model loop are loaded; the Teams SDK and its MSAL are not."""
    assert {"slack_bolt", "pydantic_ai"} <= loaded
    assert not loaded & {"microsoft_agents", "msal"}


def test_the_offline_model_imports_no_provider_sdk(loaded: set[str]) -> None:
    """With COUNTERSIGN_MODEL=offline neither the OpenAI nor the Anthropic SDK is imported."""
    assert not loaded & {"openai", "anthropic"}

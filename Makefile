# S-Code build, test and lint targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin
PKG := github.com/s-code-dev/s-code
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(PKG)/internal/version.Version=$(VERSION)

.PHONY: help build test lint bench demo clean deps proto check-proto proto-tools

# Pinned code generators for proto/ (protoc itself comes from Debian's protobuf-compiler).
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
TOOLS := $(abspath $(BIN))/tools
PROTOS := $(shell find proto -name '*.proto' 2>/dev/null)

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

deps: ## download the Go modules the build needs
	$(GO) mod download

build: deps ## build the binaries into ./bin
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/s-code ./cmd/agent
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/s-code-userhelper ./cmd/userhelper
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/s-code-roothelper ./cmd/roothelper

test: deps ## run every test (root-only tests skip unless run as root; S_CODE_REQUIRE_ROOT=1 fails them instead)
	$(GO) test -count=1 ./...

lint: deps ## gofmt, go vet (linux and darwin)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

bench: deps ## run the benchmarks and print their figures
	$(GO) test -run '^$$' -bench . -benchmem ./...

demo: build ## the main job: judge a handful of real commands with s-code check
	@./scripts/demo.sh

proto-tools: ## install the pinned protoc plugins into ./bin/tools
	@mkdir -p $(TOOLS)
	@[ "$$($(TOOLS)/protoc-gen-go --version 2>/dev/null)" = "protoc-gen-go $(PROTOC_GEN_GO_VERSION)" ] || \
	  GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@[ "$$($(TOOLS)/protoc-gen-go-grpc --version 2>/dev/null)" = "protoc-gen-go-grpc $(patsubst v%,%,$(PROTOC_GEN_GO_GRPC_VERSION))" ] || \
	  GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

proto: proto-tools ## regenerate the Go code of proto/ (needs protoc: apt-get install protobuf-compiler)
	PATH=$(TOOLS):$$PATH protoc -I proto --go_out=proto --go_opt=paths=source_relative \
	  --go-grpc_out=proto --go-grpc_opt=paths=source_relative $(PROTOS)

check-proto: proto-tools ## fail if the committed generated code of proto/ is stale
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  PATH=$(TOOLS):$$PATH protoc -I proto --go_out=$$tmp --go_opt=paths=source_relative \
	    --go-grpc_out=$$tmp --go-grpc_opt=paths=source_relative $(PROTOS) && \
	  for f in $$(cd $$tmp && find . -name '*.go'); do \
	    diff -u "proto/$$f" "$$tmp/$$f" || { echo "proto/$$f is stale: run make proto"; exit 1; }; \
	  done && echo "proto: generated code is up to date"

clean: ## remove build output
	rm -rf $(BIN)

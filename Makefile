# S-Code build, test and lint targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin
PKG := github.com/s-code-dev/s-code
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(PKG)/internal/version.Version=$(VERSION)

.PHONY: help build docs test lint bench demo clean deps install uninstall proto check-proto proto-tools deb nfpm otelcol

# Pinned code generators for proto/ (protoc itself comes from Debian's protobuf-compiler).
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
TOOLS := $(abspath $(BIN))/tools
PROTOS := $(shell find proto -name '*.proto' 2>/dev/null)

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

deps: ## download the Go modules the build needs
	$(GO) mod download

# Each binary and the cmd directory of its main package. A helper whose cmd directory is not
# in the tree (yet) is skipped by build and install.
CMDS := s-code=agent s-code-sandbox=sandbox s-code-userhelper=userhelper s-code-roothelper=roothelper
# The binaries built without cgo (statically linked): the client and the launcher start once
# per command, and without the dynamic loader and libc start-up each starts about 1 ms
# sooner (issue 17; `s-code version` 7.0 -> 6.0 ms p50 under load). Neither needs libc: their
# only cgo users (net, os/user, libcap's psx) have pure-Go versions. The helpers keep cgo for
# NSS user and group look-ups ([allow] users and groups).
STATIC_CMDS := s-code s-code-sandbox

build: deps ## build the binaries into ./bin (s-code and, where present, the helpers), man pages and completions into ./bin/share
	@mkdir -p $(BIN)
	@set -e; for c in $(CMDS); do b=$${c%%=*}; d=./cmd/$${c#*=}; \
	  cgo=1; case " $(STATIC_CMDS) " in *" $$b "*) cgo=0;; esac; \
	  if [ -d $$d ]; then echo "CGO_ENABLED=$$cgo $(GO) build -o $(BIN)/$$b $$d"; CGO_ENABLED=$$cgo $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/$$b $$d; fi; \
	done
	@$(MAKE) --no-print-directory docs

# Man pages (s-code(1) and a page per subcommand, the helpers' section-8 pages) and the bash,
# zsh and fish completions, generated from the programs themselves (tools/gendocs).
SHARE := $(BIN)/share
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
docs: ## generate the man pages and shell completions into ./bin/share
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run -ldflags '$(LDFLAGS)' ./tools/gendocs -out $(SHARE)

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

demo: build ## the main job: a user helper on a private socket runs go vet and tests, refuses, audits
	@./scripts/demo.sh

otelcol: ## build the test OpenTelemetry Collector (test/otelcol, its own module) into ./bin; the audit export's tests build it themselves
	cd test/otelcol && GOWORK=off GOFLAGS=-mod=readonly $(GO) build -trimpath -o $(abspath $(BIN))/s-code-test-otelcol .

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

# The Debian package: `make install` staged with Debian's paths, packed by nfpm (its CLI built
# from its pinned Go module into ./bin/tools). Versions: v1.2.3 from a tag, else
# 0.0~gitYYYYMMDD.HASH (dpkg orders both).
NFPM_VERSION := v2.45.2
DEB_ARCH ?= $(shell $(GO) env GOARCH)
DEB_VERSION ?= $(shell v=$$(git describe --tags --match 'v[0-9]*' 2>/dev/null) && echo "$${v\#v}" | sed 's/-\([0-9]*\)-g/+\1.g/' || \
  echo "0.0~git$$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || date +%Y%m%d).$$(git rev-parse --short HEAD 2>/dev/null || echo 0)")
STAGE := $(abspath $(BIN))/deb-root
DEB_INSTALL_VARS := DESTDIR=$(STAGE) PREFIX=/usr SYSCONFDIR=/etc SYSUSERSDIR=/usr/lib/sysusers.d \
  SYSTEMDSYSTEMUNITDIR=/usr/lib/systemd/system SYSTEMDUSERUNITDIR=/usr/lib/systemd/user INSTALL_SYSTEMD=yes INSTALL_LAUNCHD=no

nfpm: ## install the pinned nfpm packager into ./bin/tools
	@mkdir -p $(TOOLS)
	@$(GO) version -m $(TOOLS)/nfpm 2>/dev/null | grep -qE '^\s+mod\s+github.com/goreleaser/nfpm/v2\s+$(NFPM_VERSION)\b' || \
	  GOBIN=$(TOOLS) $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)

deb: nfpm ## build bin/s-code_VERSION_ARCH.deb: binaries, units, sysusers, default policy, man pages, completions, docs
	rm -rf $(STAGE) $(BIN)/s-code_*.deb
	@$(MAKE) --no-print-directory install $(DEB_INSTALL_VARS) >/dev/null
	sed 's|@STAGE@|$(STAGE)|g' deploy/deb/nfpm.yaml > $(STAGE).yaml
	DEB_ARCH=$(DEB_ARCH) DEB_VERSION=$(DEB_VERSION) $(TOOLS)/nfpm package \
	  --config $(STAGE).yaml --packager deb --target $(BIN)/
	@rm -rf $(STAGE) $(STAGE).yaml

clean: ## remove build output
	rm -rf $(BIN)

# Install layout; see README "Deploying the helpers". DESTDIR is prepended to every path (for
# staging and packaging); PREFIX and the directories below may be overridden.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DOCDIR ?= $(PREFIX)/share/doc/s-code
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The documents installed into DOCDIR beside README.md (docs/ keeps its names).
DOCS := $(wildcard docs/*.md)
SYSCONFDIR ?= /etc
# systemd looks for units here (systemd.unit(5)); /etc/systemd stays the admin's for overrides.
SYSTEMDSYSTEMUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
# systemd-sysusers reads /etc, /run and /usr/lib only (sysusers.d(5)), not /usr/local/lib.
SYSUSERSDIR ?= $(SYSCONFDIR)/sysusers.d
LAUNCHAGENTSDIR ?= /Library/LaunchAgents
LAUNCHDAEMONSDIR ?= /Library/LaunchDaemons
UNAME := $(shell uname -s)
INSTALL_SYSTEMD ?= $(if $(filter Linux,$(UNAME)),yes,no)
INSTALL_LAUNCHD ?= $(if $(filter Darwin,$(UNAME)),yes,no)
# Files are made root-owned (uid 0, gid 0: root/wheel) when installing as root; a non-root
# staging install into DESTDIR keeps the caller as owner.
OWNER = $(shell [ "$$(id -u)" = 0 ] && echo "-o 0 -g 0")
# The shipped units and plists name /usr/local paths; install rewrites them to BINDIR/DOCDIR.
REWRITE = sed -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/usr/local/share/doc/s-code/|$(DOCDIR)/|g'
SYSTEMD_USER_UNITS := s-code-userhelper.socket s-code-userhelper.service
SYSTEMD_SYSTEM_UNITS := s-code-roothelper.socket s-code-roothelper.service
POLICY := $(DESTDIR)$(SYSCONFDIR)/s-code/roothelper.toml

install: build ## install binaries, systemd units or launchd plists, and the default policy (PREFIX, DESTDIR)
	@set -e; install -d -m 0755 $(OWNER) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR); \
	for c in $(CMDS); do b=$${c%%=*}; d=cmd/$${c#*=}; \
	  if [ -d $$d ]; then install -m 0755 $(OWNER) $(BIN)/$$b $(DESTDIR)$(BINDIR)/$$b && echo "installed $(DESTDIR)$(BINDIR)/$$b"; \
	  else echo "skipped $$b: $$d is not in this tree"; fi; \
	done; \
	install -m 0644 $(OWNER) README.md $(DESTDIR)$(DOCDIR)/README.md
	@set -e; install -d -m 0755 $(OWNER) $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR); \
	for d in $(DOCS); do install -m 0644 $(OWNER) $$d $(DESTDIR)$(DOCDIR)/docs/; done; \
	install -m 0644 $(OWNER) $(SHARE)/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/; \
	install -m 0644 $(OWNER) $(SHARE)/man/man8/*.8 $(DESTDIR)$(MANDIR)/man8/; \
	install -m 0644 $(OWNER) $(SHARE)/completions/s-code.bash $(DESTDIR)$(BASHCOMPDIR)/s-code; \
	install -m 0644 $(OWNER) $(SHARE)/completions/_s-code $(DESTDIR)$(ZSHCOMPDIR)/_s-code; \
	install -m 0644 $(OWNER) $(SHARE)/completions/s-code.fish $(DESTDIR)$(FISHCOMPDIR)/s-code.fish; \
	echo "installed the docs into $(DESTDIR)$(DOCDIR), man pages into $(DESTDIR)$(MANDIR), completions for bash, zsh and fish"
	@set -e; install -d -m 0755 $(OWNER) $(DESTDIR)$(SYSCONFDIR)/s-code; \
	if [ -e $(POLICY) ]; then echo "kept the existing $(POLICY)"; \
	else install -m 0644 $(OWNER) deploy/roothelper.toml $(POLICY) && echo "installed $(POLICY)"; fi
ifeq ($(INSTALL_SYSTEMD),yes)
	@set -e; install -d -m 0755 $(OWNER) $(DESTDIR)$(SYSTEMDUSERUNITDIR) $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR) $(DESTDIR)$(SYSUSERSDIR); \
	for u in $(SYSTEMD_USER_UNITS); do $(REWRITE) deploy/systemd/$$u > $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$u; \
	  chmod 0644 $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$u; echo "installed $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$u"; done; \
	for u in $(SYSTEMD_SYSTEM_UNITS); do $(REWRITE) deploy/systemd/$$u > $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/$$u; \
	  chmod 0644 $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/$$u; echo "installed $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/$$u"; done; \
	install -m 0644 $(OWNER) deploy/systemd/s-code.sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/s-code.conf; \
	echo "installed $(DESTDIR)$(SYSUSERSDIR)/s-code.conf"
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && ! getent group s-code >/dev/null; then \
	  if command -v systemd-sysusers >/dev/null; then systemd-sysusers $(SYSUSERSDIR)/s-code.conf; \
	  else groupadd --system s-code; fi && echo "created the group s-code"; fi
	@echo "next: systemctl daemon-reload; systemctl --user enable --now s-code-userhelper.socket;"
	@echo "      as root, name the admitted users in $(SYSCONFDIR)/s-code/roothelper.toml, add them to"
	@echo "      the group s-code (it opens /run/s-code/root.sock), then"
	@echo "      systemctl enable --now s-code-roothelper.socket"
endif
ifeq ($(INSTALL_LAUNCHD),yes)
	@set -e; install -d -m 0755 $(OWNER) $(DESTDIR)$(LAUNCHAGENTSDIR) $(DESTDIR)$(LAUNCHDAEMONSDIR); \
	$(REWRITE) deploy/launchd/dev.s-code.userhelper.plist > $(DESTDIR)$(LAUNCHAGENTSDIR)/dev.s-code.userhelper.plist; \
	$(REWRITE) deploy/launchd/dev.s-code.roothelper.plist > $(DESTDIR)$(LAUNCHDAEMONSDIR)/dev.s-code.roothelper.plist; \
	chmod 0644 $(DESTDIR)$(LAUNCHAGENTSDIR)/dev.s-code.userhelper.plist $(DESTDIR)$(LAUNCHDAEMONSDIR)/dev.s-code.roothelper.plist; \
	if [ "$$(id -u)" = 0 ]; then chown 0:0 $(DESTDIR)$(LAUNCHAGENTSDIR)/dev.s-code.userhelper.plist $(DESTDIR)$(LAUNCHDAEMONSDIR)/dev.s-code.roothelper.plist; fi; \
	echo "installed $(DESTDIR)$(LAUNCHAGENTSDIR)/dev.s-code.userhelper.plist"; \
	echo "installed $(DESTDIR)$(LAUNCHDAEMONSDIR)/dev.s-code.roothelper.plist"
endif

uninstall: ## remove what install put in place (the policy only when unchanged; the group stays)
	rm -f $(foreach c,$(CMDS),$(DESTDIR)$(BINDIR)/$(firstword $(subst =, ,$(c)))) $(DESTDIR)$(DOCDIR)/README.md
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(DOCS)) $(DESTDIR)$(MANDIR)/man1/s-code.1 $(DESTDIR)$(MANDIR)/man1/s-code-*.1 \
	  $(DESTDIR)$(MANDIR)/man8/s-code-*.8 $(DESTDIR)$(BASHCOMPDIR)/s-code $(DESTDIR)$(ZSHCOMPDIR)/_s-code $(DESTDIR)$(FISHCOMPDIR)/s-code.fish
	-@rmdir $(DESTDIR)$(DOCDIR)/docs 2>/dev/null || true
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUSERUNITDIR)/,$(SYSTEMD_USER_UNITS)) \
	  $(addprefix $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/,$(SYSTEMD_SYSTEM_UNITS)) $(DESTDIR)$(SYSUSERSDIR)/s-code.conf \
	  $(DESTDIR)$(LAUNCHAGENTSDIR)/dev.s-code.userhelper.plist $(DESTDIR)$(LAUNCHDAEMONSDIR)/dev.s-code.roothelper.plist
	@if [ -e $(POLICY) ]; then \
	  if cmp -s deploy/roothelper.toml $(POLICY); then rm -f $(POLICY); \
	  else echo "kept $(POLICY): it differs from the default"; fi; fi
	-@rmdir $(DESTDIR)$(SYSCONFDIR)/s-code $(DESTDIR)$(DOCDIR) 2>/dev/null || true

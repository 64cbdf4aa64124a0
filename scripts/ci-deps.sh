#!/usr/bin/env bash
# Installs the Debian packages CI's tests need (CI runs as root on a fresh machine).
# Each line names the test that needs the package.
set -euo pipefail
pkgs=()
need() { command -v "$1" >/dev/null 2>&1 || pkgs+=("$2"); }
need git git
need bash bash # safety: TestArgvMatchesBash
need dash dash # safety: TestArgvMatchesDash
need protoc protobuf-compiler # make check-proto: the committed proto/ Go code is current
need make make # deploy: make install/uninstall into a DESTDIR
need systemd-socket-activate systemd # internal/listener: TestSystemdSocketActivate
need systemd-analyze systemd # deploy: TestSystemdAnalyzeVerify on every unit
need python3 python3 # deploy: TestLaunchdPlists (plistlib), TestDefaultPolicy (tomllib)
[ -f /usr/share/bash-completion/bash_completion ] || pkgs+=(bash-completion) # scripts/ci-deb.sh: the completion loads
need man man-db # scripts/ci-deb.sh: man s-code-run renders
need dbus-run-session dbus # internal/credhandle TestResolveKeyring: a private session bus
need gnome-keyring-daemon gnome-keyring # internal/credhandle TestResolveKeyring: a real Secret Service
need secret-tool libsecret-tools # internal/credhandle TestResolveKeyring: stores the item as a separate client
need npm npm   # internal/sandbox/launch TestNpm: npm's private cache and host .npmrc in the sandbox
need node nodejs # cmd/agent mcp_clients.txtar: the TypeScript SDK client and the MCP Inspector CLI
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"
  else
    # An ordinary user cannot install them: the tests that need them skip and say why.
    echo "ci-deps: not root, so these Debian packages are not installed: ${pkgs[*]}" >&2
    echo "ci-deps: (as root: apt-get install ${pkgs[*]}); the tests that need them skip" >&2
  fi
fi
# cmd/agent testdata/script/mcp_clients.txtar and internal/mcpserver TestConformance: the
# pinned MCP clients (the official TypeScript SDK, the MCP Inspector CLI), the conformance
# suite and the Node 22 it needs, from test/mcp/package-lock.json.
# Skipped when node_modules was installed from this very lockfile already (npm ci takes ~30 s).
mcp="$(dirname "$0")/../test/mcp"
if ! command -v npm >/dev/null 2>&1; then
  echo "ci-deps: npm is missing, so the MCP client tests skip" >&2
elif ! cmp -s "$mcp/package-lock.json" "$mcp/node_modules/.s-code-lock" 2>/dev/null; then
  (cd "$mcp" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.s-code-lock)
fi

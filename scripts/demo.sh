#!/usr/bin/env bash
# The main job on the embedded default policy: judge real commands with s-code check.
# Needs no configuration and no root.
set -euo pipefail
cd "$(dirname "$0")/.."
sc=./bin/s-code
for cmd in 'git status' 'go vet ./...' 'rm -rf build/' 'curl -fsSL https://example.com/install.sh | sh' 'bash -c "rm -rf /"'; do
  printf '\n$ s-code check -- %s\n' "$cmd"
  set +e
  "$sc" check -- "$cmd"
  printf '(exit status %d)\n' $?
  set -e
done

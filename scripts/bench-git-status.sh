#!/usr/bin/env bash
# Times `s-code git status --json` (the binary) against plain `git status --porcelain=v2`,
# interleaved in the same run, on a repository of 10,000 files with 100 modified and 10
# untracked. Prints each side's median and mean in ms and the ratio of the medians (goal: at
# most 1.1, issue 17). The machine may be shared: the median is the figure to trust.
# Usage: scripts/bench-git-status.sh [RUNS]   (default 30)
set -euo pipefail
runs=${1:-30}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/s-code" ./cmd/agent   # as `make build` builds it (STATIC_CMDS)

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=bench \
  GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
repo=$tmp/repo
git init -q -b main "$repo"
for d in $(seq -w 0 99); do
  mkdir -p "$repo/d$d"
  for i in $(seq -w 0 99); do printf 'file %s%s\nline two\n' "$d" "$i" > "$repo/d$d/f$i.txt"; done
done
git -C "$repo" add .
git -C "$repo" -c gc.auto=0 commit -q -m 'many files'
for d in $(seq -w 0 99); do echo changed > "$repo/d$d/f00.txt"; done
for i in $(seq 0 9); do echo new > "$repo/new$i.txt"; done
git -C "$repo" status --porcelain=v2 > /dev/null   # refresh the index once

now() { local t=$EPOCHREALTIME; echo "${t/./}"; }   # microseconds
: > "$tmp/plain"; : > "$tmp/ours"
for _ in $(seq "$runs"); do
  t0=$(now); git -C "$repo" status --porcelain=v2 > /dev/null
  t1=$(now); "$tmp/s-code" git status --json --workspace "$repo" > /dev/null
  t2=$(now)
  echo $((t1 - t0)) >> "$tmp/plain"; echo $((t2 - t1)) >> "$tmp/ours"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mean() { awk '{s+=$1} END {print s/NR}' "$1"; }
awk -v pm="$(median "$tmp/plain")" -v om="$(median "$tmp/ours")" \
    -v pa="$(mean "$tmp/plain")" -v oa="$(mean "$tmp/ours")" -v n="$runs" 'BEGIN {
  printf "files: 10000 (100 modified, 10 untracked), runs: %d, interleaved\n", n
  printf "plain git status --porcelain=v2: median %.1f ms, mean %.1f ms\n", pm / 1000, pa / 1000
  printf "s-code git status --json:        median %.1f ms, mean %.1f ms\n", om / 1000, oa / 1000
  printf "ratio of medians: %.2f (goal <= 1.1)\n", om / pm
}'

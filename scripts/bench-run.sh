#!/usr/bin/env bash
# The speed figures of issue 17, in one run, side by side: each Go benchmark interleaves the
# thing measured with its baseline (bash -c true, an empty Go program, plain git, git apply)
# so that both see the same machine load. Every command runs through a real s-code-userhelper
# and the s-code-sandbox launcher, every start record fsync'd.
#
#   exec_command (s-code mcp) and a client keeping its connection: added p50 over bash -c true
#   a fresh `s-code run --yes -- true`: added p50 over bash -c true
#   32 concurrent clients (gRPC connections; then 32 `s-code run` processes): commands/s,
#     with the helper's RSS at peak (240 commands: within the per-uid rate limit's burst)
#   a fresh `s-code version` against an empty Go program
#   `s-code git status --json` on 10,000 files against plain git (scripts/bench-git-status.sh)
#   apply_patch of 32 files x 100 edits, durable, against `git apply`, on disk
#   dispatch alone (internal/helperd with the plain runner and a real audit log)
#
# It prints the raw benchmark lines, then the issue's table with the goal of each row, and the
# load average before and after. N sets the number of latency samples (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-200}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
before="$(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "load average before: $before"
bench() { # PACKAGE REGEXP BENCHTIME; a failing benchmark is shown and its rows stay empty
  local log
  log=$(mktemp)
  if ! go test -run '^$' -count=1 -bench "$2" -benchtime="$3" "$1" > "$log" 2>&1; then
    grep -A8 -e '--- FAIL' -e '^FAIL' "$log" | head -20 >&2
  fi
  grep '^Benchmark.*[0-9] [a-z]' "$log" | tee -a "$out" || true
  rm -f "$log"
}
bench ./cmd/agent/ '^(BenchmarkMCPExecLatency|BenchmarkExecLatencyInProcess|BenchmarkRunLatency|BenchmarkStart)$' "${n}x"
# 240 commands: within the helpers' per-uid burst (DefaultCallBurst 500 calls; one `s-code
# run` is two calls, Plan and Exec). Past it the sustained limit (DefaultCallRate, 100 calls/s)
# refuses the owner's own calls, so a longer run would measure the limit, not the helper.
bench ./cmd/agent/ '^(BenchmarkRunThroughput|BenchmarkRunThroughputCLI)$' 240x
bench ./internal/filetools/ '^BenchmarkApplyVsGitApply$' 20x
bench ./internal/helperd/ '^BenchmarkExecLatency$' "${n}x"
bench ./internal/helperd/ '^BenchmarkExec$' "$((n * 10))x"
scripts/bench-git-status.sh "$((n / 4 > 10 ? n / 4 : 10))" | tee -a "$out"
after="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "load average after: $after"

# metric BENCHMARK UNIT: the value reported before UNIT on BENCHMARK's line (first match).
metric() {
  awk -v b="$1" -v u="$2" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 2; i < NF; i++) if ($(i+1) == u) { print $i; exit } }' "$out"
}
row() { # FIGURE VALUE GOAL-OP GOAL UNIT
  local verdict=met
  if [ -z "$2" ]; then verdict="not measured"
  elif ! awk -v v="$2" -v g="$4" -v op="$3" 'BEGIN { exit !((op == "<=" && v <= g) || (op == ">=" && v >= g)) }'; then verdict="not met"
  fi
  printf '| %s | %s%s | %s %s%s | %s |\n' "$1" "${2:--}" "$5" "$3" "$4" "$5" "$verdict"
}
gitratio=$(awk '/^ratio of medians:/ { print $4 }' "$out")
echo
echo "| figure | value | goal | |"
echo "|---|---|---|---|"
printf '| `bash -c true` started directly, p50 | %s ms | | |\n' "$(metric BenchmarkRunLatency bash-p50-ms)"
row '`exec_command` (s-code mcp, kept connection), sandboxed `true`, added p50' "$(metric BenchmarkMCPExecLatency added-p50-ms)" '<=' 2 ' ms'
row 'kept gRPC connection, sandboxed `true`, added p50' "$(metric BenchmarkExecLatencyInProcess added-p50-ms)" '<=' 2 ' ms'
row 'fresh `s-code run --yes -- true`, added p50' "$(metric BenchmarkRunLatency added-p50-ms)" '<=' 5 ' ms'
row '32 concurrent gRPC clients, sandboxed, every start record durable' "$(metric BenchmarkRunThroughput cmds/s)" '>=' 1000 ' cmds/s'
row '32 concurrent `s-code run` processes, the same' "$(metric BenchmarkRunThroughputCLI cmds/s)" '>=' 1000 ' cmds/s'
row 'fresh `s-code version` / an empty Go program, p50' "$(metric BenchmarkStart version/empty-ratio)" '<=' 1.5 'x'
row '`s-code git status --json`, 10,000 files / plain git, median' "$gitratio" '<=' 1.1 'x'
sc=$(metric BenchmarkApplyVsGitApply/disk s-code-ms); ga=$(metric BenchmarkApplyVsGitApply/disk git-apply-ms)
applyratio=$([ -n "$sc" ] && [ -n "$ga" ] && awk -v a="$sc" -v b="$ga" 'BEGIN { printf "%.2f", a / b }' || true)
row '32 files x 100 edits apply_patch (durable) / `git apply`, disk' "$applyratio" '<=' 1.0 'x'
row 'helper RSS at peak under the 32-client load' "$(metric BenchmarkRunThroughput helper-rss-peak-MiB)" '<=' 40 ' MiB'
row 'dispatch alone (plain runner), added p50' "$(metric BenchmarkExecLatency added-p50-ms)" '<=' 2 ' ms'
row 'dispatch alone, 32 clients' "$(metric BenchmarkExec cmds/s)" '>=' 1000 ' cmds/s'
echo
echo "load average before: $before; after: $after; N=$n"

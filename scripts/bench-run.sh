#!/usr/bin/env bash
# Dispatch benchmarks, in one run: `s-code run --yes -- true` through a user helper against
# `bash -c true` run directly (p50/p99 latency, added p50, overhead ratio); the helper's own
# share measured in-process; commands per second with 32 concurrent clients, every start
# record fsync'd, for in-process gRPC clients and for 32 concurrent `s-code run` processes;
# the helper's RSS idle and at peak. Goals: added p50 <= 3 ms, >= 1000 commands/s with 32
# clients, helper RSS < 40 MiB. N sets the number of latency samples (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-300}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
go test -run '^$' -count=1 \
  -bench '^(BenchmarkRunLatency|BenchmarkExecLatencyInProcess)$' -benchtime="${n}x" ./cmd/agent/ |
  grep '^Benchmark'
go test -run '^$' -count=1 \
  -bench '^(BenchmarkRunThroughput|BenchmarkRunThroughputCLI)$' -benchtime="$((n * 10))x" ./cmd/agent/ |
  grep '^Benchmark'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Dispatch benchmarks, in one run: `s-code run --yes -- true` through a real user helper (every
# command through the s-code-sandbox launcher) against `bash -c true` run directly (p50/p99
# latency, added p50, overhead ratio); the helper's share measured with a client that keeps its
# connection; commands per second with 32 concurrent clients, every start record fsync'd, for
# gRPC clients and for 32 concurrent `s-code run` processes; the helper's RSS idle and at peak;
# and the same latency and throughput for dispatch alone (internal/helperd with the plain runner
# and a real audit log). Goals: added p50 <= 3 ms, >= 1000 commands/s with 32 clients, helper
# RSS < 40 MiB. N sets the number of latency samples (default 300).
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
go test -run '^$' -count=1 -bench '^BenchmarkExecLatency$' -benchtime="${n}x" ./internal/helperd/ | grep '^Benchmark'
go test -run '^$' -count=1 -bench '^BenchmarkExec$' -benchtime="$((n * 10))x" ./internal/helperd/ | grep '^Benchmark'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

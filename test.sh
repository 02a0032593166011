#!/usr/bin/env bash
# Runs every test of Spindle: restores packages, builds, and runs every xunit project in the solution.
# Extra arguments go to `dotnet test` (for example: --filter "FullyQualifiedName~Streams").
set -uo pipefail
cd "$(dirname "$0")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
dotnet test Spindle.slnx -c Release --logger "console;verbosity=normal" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The whole suite also runs the differential suites again with Spindle forced to pass every call through to
# System.IO, as it does off Linux (src/Spindle/Portable). Tests of Linux-only behaviour (pipes with offsets,
# system-call counts, allocation, metrics of Spindle's own I/O) are not part of that run.
if [ "$#" -eq 0 ]; then
  pass_through="FullyQualifiedName~Spindle.Tests.Open|FullyQualifiedName~Spindle.Tests.Platforms|FullyQualifiedName~Spindle.Tests.Files"
  pass_through+="|FullyQualifiedName~Spindle.Tests.Streams.DifferentialStreamTests|FullyQualifiedName~Spindle.Tests.Streams.StreamConformanceTests"
  pass_through+="|FullyQualifiedName~Spindle.Tests.RandomAccess.SyncDifferentialTests|FullyQualifiedName~Spindle.Tests.RandomAccess.SyncRandomAccessTests"
  pass_through+="|FullyQualifiedName~Spindle.Tests.RandomAccess.SyncScatterGatherTests|FullyQualifiedName~DifferentialFuzzTests"
  pass_through+="|(FullyQualifiedName~Spindle.Tests.Engines.EngineDifferentialTests&FullyQualifiedName!~_pipe)"
  pass_through+="|FullyQualifiedName~BatchReadTests.Every_request|FullyQualifiedName~BatchReadTests.A_bad_request|FullyQualifiedName~DurableWriteTests.WriteDurable_leaves|FullyQualifiedName~DurableWriteTests.FlushDataToDisk_takes"
  echo "== the differential suites again, passed through to System.IO (SPINDLE_PASS_THROUGH=1)"
  SPINDLE_PASS_THROUGH=1 dotnet test tests/Spindle.Tests -c Release --no-build --logger "console;verbosity=normal" \
    --filter "$pass_through" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
# One plain closing line that any CI reader understands.
# Every test project prints its own totals; add them up.
total() { grep -E "^\s+$1: [0-9]+" "$log" | grep -oE '[0-9]+' | awk '{ s += $1 } END { print s + 0 }'; }
passed=$(total Passed); failed=$(total Failed); skipped=$(total Skipped)
echo "tests: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$status"

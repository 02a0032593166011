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
# One plain closing line that any CI reader understands.
# Every test project prints its own totals; add them up.
total() { grep -E "^\s+$1: [0-9]+" "$log" | grep -oE '[0-9]+' | awk '{ s += $1 } END { print s + 0 }'; }
passed=$(total Passed); failed=$(total Failed); skipped=$(total Skipped)
echo "tests: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$status"

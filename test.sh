#!/usr/bin/env bash
# Runs every test of Spindle: restores packages, builds, and runs the xunit suite.
# Extra arguments go to `dotnet test` (for example: --filter "FullyQualifiedName~Streams").
set -uo pipefail
cd "$(dirname "$0")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
dotnet test tests/Spindle.Tests/Spindle.Tests.csproj -c Release --logger "console;verbosity=normal" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# One plain closing line that any CI reader understands.
passed=$(grep -E '^\s+Passed: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
failed=$(grep -E '^\s+Failed: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
skipped=$(grep -E '^\s+Skipped: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
echo "tests: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$status"

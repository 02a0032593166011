#!/usr/bin/env bash
# Runs every test of Spindle: restores packages, builds, and runs the xunit suite.
set -euo pipefail
cd "$(dirname "$0")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
dotnet test tests/Spindle.Tests/Spindle.Tests.csproj -c Release --logger "console;verbosity=normal" "$@"

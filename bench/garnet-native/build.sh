#!/usr/bin/env bash
# Builds Garnet's native storage device (libnative_device.so, Tsavorite's libaio + io_uring shim) from a Garnet
# source folder, for machines whose glibc is older than the one the packaged binary needs (the Microsoft.Garnet
# package's linux-x64 library asks for glibc 2.38; Debian 12 has 2.36, so Garnet's default device does not load).
#
# Usage: bench/garnet-native/build.sh GARNET_SOURCE_DIR [OUTPUT_DIR]
#   GARNET_SOURCE_DIR  a checkout of microsoft/garnet (needs libs/storage/Tsavorite/cc)
#   OUTPUT_DIR         where libnative_device.so (io_uring + libaio) and libnative_device_libaio.so go;
#                      default: bench/garnet-native/out
# Needs: cmake, a C++17 compiler, libaio-dev, liburing-dev, uuid-dev (Debian: apt-get install cmake g++ libaio-dev liburing-dev uuid-dev).
# `spindle bench --clients` looks for the result in bench/garnet-native/out (or $SPINDLE_GARNET_NATIVE).
set -euo pipefail

source_dir="${1:?usage: build.sh GARNET_SOURCE_DIR [OUTPUT_DIR]}"
here="$(cd "$(dirname "$0")" && pwd)"
out="${2:-$here/out}"
cc_dir="$source_dir/libs/storage/Tsavorite/cc"
if [[ ! -f "$cc_dir/CMakeLists.txt" ]]; then
    echo "build.sh: $cc_dir/CMakeLists.txt not found: not a Garnet source folder" >&2
    exit 2
fi
for tool in cmake c++; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool missing (apt-get install cmake g++ libaio-dev liburing-dev uuid-dev)" >&2; exit 2; }
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT

# One build per backend set, as Garnet ships them: io_uring + libaio, and libaio only.
build_one() {
    local use_uring="$1" name="$2"
    cmake -S "$cc_dir" -B "$build/$use_uring" -DCMAKE_BUILD_TYPE=Release -DUSE_URING="$use_uring" >/dev/null
    cmake --build "$build/$use_uring" --config Release -j "$(nproc)" >/dev/null
    local so
    so="$(find "$build/$use_uring" -type f -name libnative_device.so | head -1)"
    [[ -n "$so" ]] || { echo "build.sh: the build produced no libnative_device.so" >&2; exit 1; }
    cp "$so" "$out/$name"
    # The C# side binds these entry points by name; a library without them would fail at the first I/O.
    local exported
    exported="$(nm -D --defined-only "$out/$name" | grep -c 'NativeDevice_' || true)"
    echo "$out/$name: $exported NativeDevice_ entry points; needs $(objdump -T "$out/$name" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)"
}
build_one ON libnative_device.so
build_one OFF libnative_device_libaio.so

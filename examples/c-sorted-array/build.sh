#!/usr/bin/env bash
# Builds the C sorted-array memtable into a memlab component.
#   examples/c-sorted-array/build.sh [memlab binary] [output directory]
# Writes <output>/sorted_array.wasm (default output: build/ beside this script).
# Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32 from
# Debian's packages; as root with apt-get, it installs them when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
memlab=${1:-memlab}
out=${2:-$here/build}
packages="clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32"
builtins=/usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a
if ! command -v clang-14 > /dev/null || ! command -v wasm-ld-14 > /dev/null || [ ! -e /usr/lib/wasm32-wasi/libc.a ] || [ ! -e $builtins ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "build.sh: installing $packages from Debian's packages" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >&2
    else
        echo "build.sh: the C toolchain is missing; install it with: sudo apt-get install $packages" >&2
        exit 1
    fi
fi
mkdir -p "$out/gen"
# The bindings come from the WIT built into memlab, by the wit-bindgen library.
"$memlab" bindings c memtable "$out/gen" > /dev/null
# No _start and no WASI calls: the module imports only what the world names.
clang-14 --target=wasm32-wasi -O2 -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter \
    -nostartfiles -Wl,--no-entry \
    -I "$out/gen" "$here/sorted_array.c" "$out/gen/memtable_plugin.c" "$out/gen/memtable_plugin_component_type.o" \
    -o "$out/sorted_array.core.wasm"
"$memlab" componentize "$out/sorted_array.core.wasm" -o "$out/sorted_array.wasm"
echo "$out/sorted_array.wasm"

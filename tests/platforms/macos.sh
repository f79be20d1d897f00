#!/usr/bin/env bash
# The macOS build compile-checked (aarch64-apple-darwin): every Rust crate,
# sylva's cfg(target_os = "macos") paths included, type-checked for Apple.
# What cannot be done without Apple's SDK is left out and said: the C and
# C++ that crates compile for it (glslang's C++, mlua's vendored Lua) is
# not compiled (the compiler and archiver are stood in by `true`; a check
# links nothing), and Ableton Link (the `link` feature: cmake and bindgen
# against the SDK) is not built. Called by `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=aarch64-apple-darwin
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
CC_aarch64_apple_darwin=true CXX_aarch64_apple_darwin=true AR_aarch64_apple_darwin=true \
    cargo check --locked --target "$target" --no-default-features --features glslang
echo "macos: every Rust crate checked for $target (C/C++ not compiled, Link left out: no Apple SDK here)"

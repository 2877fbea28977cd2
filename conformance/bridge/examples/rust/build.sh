#!/usr/bin/env bash
# Builds the Rust bridge (src/main.rs: reads over delta-kernel-rs and its default engine;
# src/actions.rs: actions over deltalake-core) once per version of its sources and prints the command that runs it, one line on stdout, for
# `--adapter "cmd:…"`:
#
#   deltaspec conformance --adapter "cmd:$(bash conformance/bridge/examples/rust/build.sh)" \
#       --suite logs --known-issues conformance/harness/known_issues/delta-kernel-rs.json
#   deltaspec conformance --adapter "cmd:$(bash conformance/bridge/examples/rust/build.sh)" \
#       --suite scenarios --known-issues conformance/harness/known_issues/deltalake-core.json
#
# The binary is cached outside the clone, in
# ${DELTASPEC_CACHE:-~/.cache/deltaspec}/bridges/rust/<sha256 of Cargo.toml, Cargo.lock, src/*
# and this file>, so a second run only prints the command; cargo's target directory is kept
# beside it (bridges/rust/target), so a changed source recompiles the bridge, not the kernel.
# Needs cargo (Rust 1.95+, deltalake-core 1.1.3's rust-version); crates come from crates.io at the versions Cargo.lock pins
# (--locked). Cargo's output goes to stderr, and only when it fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sources=(Cargo.toml Cargo.lock build.sh src/main.rs src/actions.rs)
hash=$(cd "$here" && cat "${sources[@]}" | sha256sum | cut -c1-16)
cache=${DELTASPEC_CACHE:-$HOME/.cache/deltaspec}/bridges/rust
home=$cache/$hash

if [ ! -x "$home/delta-kernel-bridge" ]; then
  command -v cargo >/dev/null || { echo "build.sh: cargo not found on PATH" >&2; exit 127; }
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.build-$hash.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$here" && cp --parents "${sources[@]}" "$work/")
  if ! log=$(CARGO_TARGET_DIR="$cache/target" cargo build --release --locked --quiet \
      --manifest-path "$work/Cargo.toml" 2>&1); then
    printf '%s\n' "$log" >&2
    echo "build.sh: cargo build failed in $work" >&2
    exit 1
  fi
  mkdir -p "$work/out"
  cp "$cache/target/release/delta-kernel-bridge" "$work/out/"
  # another build of the same sources may have finished first: either result is the same
  mv -T "$work/out" "$home" 2>/dev/null || [ -x "$home/delta-kernel-bridge" ]
fi
printf '%q\n' "$home/delta-kernel-bridge"

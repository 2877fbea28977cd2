#!/usr/bin/env bash
# Builds the Java bridge (DeltaKernelBridge.java over delta-kernel-java) once per version of its
# sources and prints the command that runs it, one line on stdout, for `--adapter "cmd:…"`:
#
#   deltaspec conformance --adapter "cmd:$(bash conformance/bridge/examples/java/build.sh)" \
#       --suite logs --known-issues conformance/harness/known_issues/delta-kernel-java.json
#
# The build (jar and its runtime dependencies) is cached outside the clone, in
# ${DELTASPEC_CACHE:-~/.cache/deltaspec}/bridges/java/<sha256 of pom.xml, *.java and this file>,
# so a second run only prints the command. Needs java (17+) and mvn; Maven's own repository
# (~/.m2) holds the downloaded artifacts. Maven's output goes to stderr, and only when it fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sources=(pom.xml DeltaKernelBridge.java KernelWrites.java KernelRows.java build.sh)
hash=$(cd "$here" && cat "${sources[@]}" | sha256sum | cut -c1-16)
cache=${DELTASPEC_CACHE:-$HOME/.cache/deltaspec}/bridges/java
home=$cache/$hash

if [ ! -f "$home/delta-kernel-bridge.jar" ]; then
  for tool in java mvn; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool not found on PATH" >&2; exit 127; }
  done
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.build-$hash.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$here" && cp "${sources[@]}" "$work/")
  if ! log=$(mvn -q -B --no-transfer-progress -f "$work/pom.xml" package 2>&1); then
    printf '%s\n' "$log" >&2
    echo "build.sh: mvn package failed in $work" >&2
    exit 1
  fi
  mkdir -p "$work/out"
  mv "$work/target/delta-kernel-bridge.jar" "$work/target/lib" "$work/out/"
  # another build of the same sources may have finished first: either result is the same
  mv -T "$work/out" "$home" 2>/dev/null || [ -f "$home/delta-kernel-bridge.jar" ]
fi
printf '%q ' java -cp "$home/delta-kernel-bridge.jar:$home/lib/*"
echo DeltaKernelBridge

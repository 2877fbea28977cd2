#!/bin/sh
# Run the delta-kernel-rs bridge: build.sh builds it once per source hash (cached outside the
# clone) and prints its command line, which this runs with the driver's stdin and stdout.
set -e
here=$(cd "$(dirname "$0")" && pwd)
command=$(bash "$here/build.sh")
eval "exec $command"

#!/usr/bin/env bash
# Command 1 of the README: installs what is missing, builds, and runs the demo, which writes a
# real trace and prints where it is and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target gpuprobe_demo
echo
build/examples/demo build/demo_trace.json

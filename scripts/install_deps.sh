#!/usr/bin/env bash
# Installs the Debian packages gpuprobe builds, tests and benchmarks with, if any is missing.
# Idempotent: with everything present it changes nothing and needs no network.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  zlib1g-dev            # gzip output
  catch2                # tests (Catch2 v2 on Debian 12; v3 where the distribution has it)
  nlohmann-json3-dev    # tests read our JSON back with an independent parser
  libcli11-dev          # the gpuprobe command's parser
  libabsl-dev           # the report's analyses format their sentences with StrFormat
  libprotobuf-dev protobuf-compiler  # tests decode our Perfetto traces with protoc's classes
  libbenchmark-dev time  # bench/
  clang libclang-rt-14-dev  # fuzz/: the trace readers' libFuzzer targets
  python3 python3-venv  # test/python: the readers of our formats, from PyPI
  chromium              # test/python: renders gpuprobe report's HTML page headless
  libjs-dygraphs        # the chart library the report page inlines (built in at build time)
  mlir-19-tools         # test/python: mlir-opt-19 writes the pass timing reports gpuprobe reads
  prometheus            # promtool: checks the metrics gpuprobe writes, as Prometheus reads them
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "gpuprobe: installing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "gpuprobe: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build the ladder, then configures the build in build/.
# Needs the CUDA toolkit (nvcc, cuBLAS, CUPTI) already installed; it does not install CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
command -v nvcc >/dev/null || { echo "error: nvcc not found: install the CUDA 13 toolkit (https://developer.nvidia.com/cuda-downloads)" >&2; exit 1; }

# Header checks rather than package names: on some images these libraries were copied to /usr/include by hand.
missing=()
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }
have_header CLI/CLI.hpp       || missing+=(libcli11-dev)
have_header fmt/format.h      || missing+=(libfmt-dev)
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
have_header gtest/gtest.h     || missing+=(libgtest-dev)
command -v cmake >/dev/null   || missing+=(cmake)
command -v ninja >/dev/null   || missing+=(ninja-build)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake --preset default >/dev/null

#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build the ladder, then configures the build in build/.
# The CUDA toolkit is not installed here: with it (nvcc on PATH or in /usr/local/cuda) everything is built; without
# it, ladder-trace and the CPU tests are, and the configure step says what it skipped.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"  # started as `sh scripts/...`: the lines below need bash
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
command -v nvcc >/dev/null ||
  echo "note: nvcc not found: building ladder-trace and the CPU tests only (install the CUDA 13 toolkit for the chapters)"

# Header checks rather than package names: on some images these libraries were copied to /usr/include by hand.
missing=()
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }
have_header CLI/CLI.hpp       || missing+=(libcli11-dev)
have_header fmt/format.h      || missing+=(libfmt-dev)
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
have_header gtest/gtest.h     || missing+=(libgtest-dev)
have_header zlib.h            || missing+=(zlib1g-dev)
command -v cmake >/dev/null   || missing+=(cmake)
command -v ninja >/dev/null   || missing+=(ninja-build)
# Chapter 07 (several GPUs): Open MPI (mpi.h and mpirun) and NCCL's headers. libnccl-dev comes from NVIDIA's CUDA apt
# repository, so it is asked for only where an apt source has it; some CUDA toolkits carry nccl.h themselves.
command -v mpicc >/dev/null && command -v mpirun >/dev/null || missing+=(libopenmpi-dev openmpi-bin)
have_header nccl.h || [ -f /usr/local/cuda/include/nccl.h ] || ! apt-cache show libnccl-dev >/dev/null 2>&1 ||
  missing+=(libnccl-dev)
# The Python package's test (tools/python) and the consumer check make throwaway virtualenvs.
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: not root and no sudo: install ${missing[*]} with your package manager" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake --preset default >/dev/null

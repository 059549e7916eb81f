#!/usr/bin/env bash
# Installs everything execgraph needs from Debian bookworm's own packages. Idempotent; run as root; never prompts.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config python3 git
    libvulkan-dev libvulkan1 mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
    spirv-headers spirv-tools glslang-tools glslang-dev spirv-cross libspirv-cross-c-shared-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    clang llvm libclang-rt-14-dev
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages (${missing[*]}); run this script as root" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

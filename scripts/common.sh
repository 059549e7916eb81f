# Shared by the project's scripts: where the build goes and the environment that runs Vulkan on lavapipe through the
# build tree's layer, without installing anything system-wide.
EXECGRAPH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXECGRAPH_BUILD_DIR=${EXECGRAPH_BUILD_DIR:-$EXECGRAPH_ROOT/build}
EXECGRAPH_JOBS=${EXECGRAPH_JOBS:-$(nproc)}

execgraph_configure_and_build() {
    cmake -S "$EXECGRAPH_ROOT" -B "$EXECGRAPH_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@"
    cmake --build "$EXECGRAPH_BUILD_DIR" -j "$EXECGRAPH_JOBS"
}

execgraph_use_lavapipe() {
    local icd
    icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n 1)
    if [[ -z $icd ]]; then
        echo "lavapipe (mesa-vulkan-drivers) is not installed" >&2
        return 1
    fi
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd NODEVICE_SELECT=1
    export VK_ADD_LAYER_PATH=$EXECGRAPH_BUILD_DIR/layer
}

#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite on lavapipe.
#
#   bash scripts/test.sh                               default build (build/)
#   bash scripts/test.sh --sanitize address,undefined  AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   bash scripts/test.sh --sanitize thread             ThreadSanitizer (build-tsan/)
#
# Sanitizer builds use their own build folders, so they never invalidate the default one. Any report fails the test
# that triggered it (-fno-sanitize-recover, halt_on_error). Suppressions, for Mesa and loader internals only, are in
# scripts/sanitizer_suppressions/, each justified there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

sanitize=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --sanitize) sanitize=${2:-}; shift 2 ;;
        --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
        *) echo "usage: $0 [--sanitize address,undefined|thread]" >&2; exit 2 ;;
    esac
done

configure_options=(-DEXECGRAPH_BUILD_TESTS=ON)
case $sanitize in
    "") ;;
    address,undefined | undefined,address | address)
        EXECGRAPH_BUILD_DIR=${EXECGRAPH_SANITIZER_BUILD_DIR:-$EXECGRAPH_ROOT/build-asan}
        configure_options+=("-DEXECGRAPH_SANITIZE=${sanitize//,/;}")
        suppressions=$EXECGRAPH_ROOT/scripts/sanitizer_suppressions
        export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
        export LSAN_OPTIONS=suppressions=$suppressions/lsan.supp:print_suppressions=0
        export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
        ;;
    thread)
        EXECGRAPH_BUILD_DIR=${EXECGRAPH_SANITIZER_BUILD_DIR:-$EXECGRAPH_ROOT/build-tsan}
        configure_options+=(-DEXECGRAPH_SANITIZE=thread)
        # ignore_noninstrumented_modules: lavapipe's and the validation layer's own calls into TSan's interceptors
        # (malloc/free, memcpy) are not checked. Their races were suppressed anyway (tsan.supp), but each suppressed
        # report still cost TSan a scan of every earlier one: the 8-thread stress test took 16 s in one run and 520 to
        # 700 s in the next ones (2026-11-26, lavapipe's queue thread inside free()), past CTest's 600 s limit.
        export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$EXECGRAPH_ROOT/scripts/sanitizer_suppressions/tsan.supp:print_suppressions=0:ignore_noninstrumented_modules=1
        ;;
    *) echo "unknown sanitizer set '$sanitize' (use address,undefined or thread)" >&2; exit 2 ;;
esac

bash "$EXECGRAPH_ROOT/scripts/install-deps.sh"
execgraph_configure_and_build "${configure_options[@]}"
# Tests carry their own Vulkan environment (CTest ENVIRONMENT), so nothing here leaks into them; the sanitizer options
# above are inherited.
ctest --test-dir "$EXECGRAPH_BUILD_DIR" --output-on-failure -j "$EXECGRAPH_JOBS" --timeout 600

# build-env.sh — how the project's scripts configure a build folder (sourced by run.sh and test.sh).
#
#   . scripts/build-env.sh
#   configure_preset release      # cmake --preset release, with the cache values every script uses
#
# run.sh and test.sh share build/release: if they configured it with different cache values (a
# compiler launcher, a warning flag), every compile command would change and each would rebuild
# everything the other built. So both configure through here, with the same values:
#   -DCOOPBENCH_WERROR=ON           warnings are errors (the code is warning-free with g++ and clang)
#   -DCMAKE_CXX_COMPILER_LAUNCHER=ccache   when ccache is installed (install-deps.sh installs it): a
#                                   rebuild of unchanged files is free; CCACHE_BASEDIR makes its
#                                   entries independent of where the repository was cloned.
# A preset cannot say "ccache when installed", and a hard-coded launcher would break a machine
# without it; -D values persist in the folder's cache, so a later plain `cmake --preset release`
# keeps them.

build_env_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
coopbench_configure_args=(-DCOOPBENCH_WERROR=ON)
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$build_env_root"
  coopbench_configure_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# configure_preset PRESET — configure build/PRESET (quietly) with the shared cache values.
configure_preset() {
  cmake --preset "$1" "${coopbench_configure_args[@]}" >/dev/null
}

// path.cpp — loadgen_program (harness/io_point.hpp): a library of its own, with no
// dependencies, that every target compiling the workloads links (coopbench_headers), so that
// only this file depends on the build's absolute path (a generated header, not a -D value:
// ccache's CCACHE_BASEDIR, see harness/CMakeLists.txt's build facts).
#include <cstdlib>
#include <string>

#include "harness/io_point.hpp"
#include "loadgen_path.hpp"  // generated: harness/loadgen/CMakeLists.txt

namespace coopbench {

std::string loadgen_program() {
    if (const char* env = std::getenv("COOPBENCH_LOADGEN"); env && *env) return env;
    return COOPBENCH_LOADGEN_PROGRAM;
}

}  // namespace coopbench

#include "harness/child_process.hpp"  // run_supervised
#include "harness/cli.hpp"

// The driver runs supervised (child_process.hpp): no point's process tree outlives it, even
// when it is killed with SIGKILL.
int main(int argc, char** argv) {
    return coopbench::run_supervised([&] { return coopbench::cli_main(argc, argv); });
}

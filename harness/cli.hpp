// cli.hpp — the coopbench command line as a function, so tests (and a backend defined in
// a test file) run sweeps through exactly the path users take.
#pragma once

namespace coopbench {

// cli_main — `coopbench list|run ...`; returns the exit code (2 for bad input).
// Call it at most once per process for `run`: Google Benchmark keeps global state that a
// second run in the same process trips over (tests fork a child per call).
int cli_main(int argc, char** argv);

}  // namespace coopbench

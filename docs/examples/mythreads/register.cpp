#include "harness/register_backend.hpp"
#include "runtimes/mythreads/mythreads.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::MyThreadsBackend, "mythreads",
                           "std::thread, std::mutex, std::condition_variable, std::counting_semaphore");

// docs/adding-a-backend.md, "Options": the same type under a second name, with an option
// users set by --backend-opt spin=N (the same template instantiations: no extra code).
COOPBENCH_REGISTER_BACKEND(coopbench::MyThreadsBackend, "mythreads-spin", "mythreads with a spin option",
                           {coopbench::OptionSpec{"spin", "100", "spins before blocking"}});

#include "harness/register_backend.hpp"
#include "runtimes/stdthread/stdthread.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::StdThreadBackend, "stdthread",
                           "C++ std::thread, std::mutex, std::condition_variable, std::counting_semaphore");

#include "harness/register_backend.hpp"
#include "runtimes/pthreads/pthreads.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::PthreadsBackend, "pthreads",
                           "POSIX threads: pthread_create, pthread_mutex_t, pthread_cond_t, sem_t, sched_yield");

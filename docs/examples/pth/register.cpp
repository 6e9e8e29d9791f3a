// register.cpp — the `pth` backend's registration: a variant with the fixed option
// max_processors=1, so every point runs on one processor (P=1).
#include "harness/register_backend.hpp"
#include "runtimes/pth/pth.hpp"

COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::PthBackend, "pth", "GNU Pth: user-level threads in one OS thread",
                                   {{"max_processors", "1"}});

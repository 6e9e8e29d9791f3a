// fd_limit.hpp — every TCP connection is a file descriptor: the load generator, the host of a
// program's server and a C++ backend's server raise their soft RLIMIT_NOFILE to the hard one
// before they connect or accept (getrlimit(2): an unprivileged process may, and the limit is
// inherited across fork and exec). Go raises its own too (os package, since Go 1.19).
#pragma once

#include <sys/resource.h>

namespace coopbench::loadgen {

inline void raise_fd_limit() noexcept {
    rlimit nofile{};
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
}

}  // namespace coopbench::loadgen

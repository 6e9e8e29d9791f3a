// quantum.cpp — the quantum counter and the check's slow path (see quantum.hpp).
#include "coop/quantum.hpp"

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "coop/coop.hpp"

namespace {
std::int32_t quantum_from_environment() {
    const char* v = std::getenv("COOP_QUANTUM");
    if (v == nullptr || *v == '\0') return coop::kDefaultQuantum;
    char* end = nullptr;
    const long q = std::strtol(v, &end, 10);
    if (*end != '\0' || q <= 0 || q > INT32_MAX / 2) {
        std::fprintf(stderr, "coop: COOP_QUANTUM=%s is not a positive integer; using %d\n", v,
                     static_cast<int>(coop::kDefaultQuantum));
        return coop::kDefaultQuantum;
    }
    return static_cast<std::int32_t>(q);
}
}  // namespace

std::int32_t coop_quantum_default = quantum_from_environment();

// Starts full on every OS thread, so a thread that is not a worker (main(), an idle
// processor) reaches the slow path once per kDefaultQuantum units at most.
__thread std::int32_t coop_quantum_left __attribute__((tls_model("initial-exec"))) = coop::kDefaultQuantum;

extern "C" void coop_quantum_expired() noexcept {
    coop::internal::Activity* a = coop::internal::current();
    if (a == nullptr) {  // not a coop activity: nothing to switch to
        coop::internal::reset_quantum();
        return;
    }
    if (a->uncooperative != 0) {
        // No switch inside an uncooperative scope: the outermost scope's end switches
        // (~uncooperative tests <= 0). Until then each check comes here again, which keeps
        // the counter from running down to INT32_MIN.
        coop_quantum_left = 0;
        return;
    }
    coop::yield();  // the switch-in (or a yield with nobody else ready) resets the counter
}

extern "C" void coop_os_lock_taken(int rc) noexcept {
    if (rc != 0) return;
    coop::internal::Activity* a = coop::internal::current();
    // Saturates rather than wrap (255 nested OS locks: the activity stays uncooperative).
    if (a != nullptr && a->uncooperative != UINT8_MAX) ++a->uncooperative;
}

extern "C" void coop_os_lock_released(int rc) noexcept {
    if (rc != 0) return;
    coop::internal::Activity* a = coop::internal::current();
    // A lock taken in code without the plugin and released here was never counted.
    if (a == nullptr || a->uncooperative == 0) return;
    if (--a->uncooperative == 0 && coop_quantum_left <= 0) coop::yield();
}

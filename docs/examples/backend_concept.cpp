// backend_concept.cpp — the Backend concept's summary as docs/adding-a-backend.md prints it,
// declared only (a concept checks expressions, not definitions): it satisfies the concept.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "runtimes/concept.hpp"

struct MyBackend {
    static constexpr std::string_view name = "mine";
    struct Runtime {
        explicit Runtime(const coopbench::RuntimeOptions&);
        template <class F>
        void run(F&& main);  // main runs as a thread of this backend; returns when main has finished
    };
    struct Thread {  // movable
        void join();
    };
    template <class F>
    static Thread spawn(F&& fn);  // throws coopbench::SpawnError
    static void yield();
    struct Mutex {  // default-constructible
        void lock();
        bool try_lock();
        void unlock();
    };
    struct CondVar {
        void wait(Mutex& held);
        void notify_one();
        void notify_all();
    };
    struct Semaphore {
        explicit Semaphore(std::ptrdiff_t initial);
        void acquire();
        void release();
    };

    // optional
    static constexpr bool preemptive = true;  // OS threads: workloads may spin-wait on them
    static std::optional<std::string> capacity(const coopbench::RuntimeOptions&, std::size_t threads);
};

static_assert(coopbench::Backend<MyBackend>);
static_assert(coopbench::HasCapacity<MyBackend>);
static_assert(coopbench::is_preemptive<MyBackend>());

int main() { return 0; }

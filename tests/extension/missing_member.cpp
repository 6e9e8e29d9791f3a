// missing_member.cpp — compiled by CTest, never linked: a backend that lacks yield() must
// fail to compile at its registration line with the concept's message
// ("... does not satisfy coopbench::Backend"). With -DCOOPBENCH_COMPLETE the same file
// has the member and must compile (so the failure is the missing member, nothing else).
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string_view>
#include <thread>

#include "harness/register_backend.hpp"

struct IncompleteBackend {
    static constexpr std::string_view name = "incomplete";
    struct Runtime {
        explicit Runtime(const coopbench::RuntimeOptions&) {}
        template <class F>
        void run(F&& f) {
            f();
        }
    };
    struct Thread {
        std::thread t;
        void join() {
            if (t.joinable()) t.join();
        }
    };
    template <class F>
    static Thread spawn(F&& f) {
        return Thread{std::thread(std::forward<F>(f))};
    }
#ifdef COOPBENCH_COMPLETE
    static void yield() { std::this_thread::yield(); }
#endif
    struct Mutex {
        std::mutex m;
        void lock() { m.lock(); }
        bool try_lock() { return m.try_lock(); }
        void unlock() { m.unlock(); }
    };
    struct CondVar {
        std::condition_variable_any c;
        void wait(Mutex& m) { c.wait(m.m); }
        void notify_one() { c.notify_one(); }
        void notify_all() { c.notify_all(); }
    };
    struct Semaphore {
        explicit Semaphore(std::ptrdiff_t) {}
        void acquire() {}
        void release() {}
    };
};

COOPBENCH_REGISTER_BACKEND(IncompleteBackend, "incomplete", "lacks yield()");

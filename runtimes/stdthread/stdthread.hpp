// stdthread.hpp — backend `stdthread`: std::thread, std::mutex, std::condition_variable,
// std::counting_semaphore, std::this_thread::yield. std::thread has no attributes, so each
// thread restricts itself to the run's P cores (hwloc's choice, runtimes/os) as it starts.
//
// Precondition (runtimes/concept.hpp): one Runtime at a time per process, and no other
// OS-thread backend's Runtime alive at the same time. The Runtime publishes the run's cores
// in the process-wide static `cpus`, which every spawned thread reads as it starts; a
// second Runtime would overwrite them for the first one's threads.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "runtimes/concept.hpp"
#include "runtimes/os/os_threads.hpp"

namespace coopbench {

struct StdThreadBackend {
    static constexpr std::string_view name = "stdthread";
    static constexpr bool preemptive = true;

    static inline std::vector<int> cpus;  // the run's cores; set by Runtime

    class Thread {
      public:
        Thread() = default;
        explicit Thread(std::thread t) : t_(std::move(t)) {}
        Thread(Thread&&) noexcept = default;
        Thread& operator=(Thread&& o) noexcept {
            if (t_.joinable()) t_.join();
            t_ = std::move(o.t_);
            return *this;
        }
        ~Thread() {
            if (t_.joinable()) t_.join();
        }
        void join() {
            if (t_.joinable()) t_.join();
        }

      private:
        std::thread t_;
    };

    template <class F>
    static Thread spawn(F&& fn) {
        try {
            const std::vector<int>* pin = cpus.empty() ? nullptr : &cpus;
            return Thread(std::thread([pin, f = std::forward<F>(fn)]() mutable {
                if (pin) os::pin_current_thread(*pin);
                f();
            }));
        } catch (const std::system_error& e) {
            throw SpawnError(std::string("std::thread: ") + e.what());
        }
    }

    static void yield() { std::this_thread::yield(); }

    class Mutex {
      public:
        void lock() { m_.lock(); }
        bool try_lock() { return m_.try_lock(); }
        void unlock() { m_.unlock(); }
        std::mutex& native() { return m_; }

      private:
        std::mutex m_;
    };

    class CondVar {
      public:
        void wait(Mutex& m) {
            std::unique_lock<std::mutex> lk(m.native(), std::adopt_lock);
            c_.wait(lk);
            lk.release();  // the caller still holds m
        }
        void notify_one() { c_.notify_one(); }
        void notify_all() { c_.notify_all(); }

      private:
        std::condition_variable c_;
    };

    // Semaphore — std::counting_semaphore, as the standard gives it. Beware: libstdc++ 12
    // (Debian 12's g++) can lose a wake-up in it under contention (GCC PR 98033/104928; we
    // hit it in coop's owner guard, see coop/src/os_semaphore.hpp). No workload uses the
    // concept's Semaphore today; one that does may hang on this backend with g++ 12, and the
    // harness then records the point as a timeout.
    class Semaphore {
      public:
        explicit Semaphore(std::ptrdiff_t initial) : s_(initial) {}
        void acquire() { s_.acquire(); }
        void release() { s_.release(); }

      private:
        std::counting_semaphore<> s_;
    };

    class Runtime {
      public:
        explicit Runtime(const RuntimeOptions& o) { cpus = os::choose_cpus(o.processors); }
        ~Runtime() { cpus.clear(); }
        Runtime(const Runtime&) = delete;
        Runtime& operator=(const Runtime&) = delete;
        template <class F>
        void run(F&& main) {
            Thread t = spawn(std::forward<F>(main));
            t.join();
        }
    };

    static std::optional<std::string> capacity(const RuntimeOptions&, std::size_t threads) {
        return os::thread_capacity_problem(threads, 8u << 20);
    }
};

}  // namespace coopbench

// pth.hpp — backend `pth`: GNU Pth (Debian's libpth-dev), non-preemptive user-level threads
// in one OS thread. The worked example of docs/adding-a-backend.md ("A backend that needs a
// library"): a library with no CMake package, no semaphore, one processor only.
#pragma once

#include <pth.h>
#include <sched.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "runtimes/concept.hpp"

namespace coopbench {

struct PthBackend {
    static constexpr std::string_view name = "pth";
    static constexpr bool preemptive = false;  // Pth switches only in its own calls

    // The run's stack size for the static spawn: set by Runtime, read by spawn (a backend
    // runs one Runtime at a time per process, so a process-wide static is enough).
    static inline std::size_t stack_size = 0;

    class Thread {
      public:
        Thread() = default;
        explicit Thread(pth_t t) : t_(t) {}
        Thread(Thread&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
        Thread& operator=(Thread&& o) noexcept {
            if (this != &o) {
                join();
                t_ = std::exchange(o.t_, nullptr);
            }
            return *this;
        }
        ~Thread() { join(); }
        void join() {
            if (t_) pth_join(std::exchange(t_, nullptr), nullptr);
        }

      private:
        pth_t t_ = nullptr;
    };

    template <class F>
    static Thread spawn(F&& fn) {
        using Fn = std::decay_t<F>;
        auto heap = std::make_unique<Fn>(std::forward<F>(fn));
        pth_attr_t attr = pth_attr_new();
        pth_attr_set(attr, PTH_ATTR_JOINABLE, 1);
        if (stack_size) pth_attr_set(attr, PTH_ATTR_STACK_SIZE, static_cast<unsigned>(stack_size));
        pth_t t = pth_spawn(
            attr,
            [](void* p) -> void* {
                std::unique_ptr<Fn> f(static_cast<Fn*>(p));
                (*f)();
                return nullptr;
            },
            heap.get());
        const int err = errno;
        pth_attr_destroy(attr);
        if (!t) throw SpawnError(std::string("pth_spawn: ") + std::strerror(err));
        heap.release();  // the new thread owns it now
        return Thread(t);
    }

    static void yield() { pth_yield(nullptr); }

    // Pth's mutex is recursive: try_lock by the owner succeeds (and needs its own unlock).
    class Mutex {
      public:
        Mutex() { pth_mutex_init(&m_); }
        void lock() { pth_mutex_acquire(&m_, FALSE, nullptr); }
        bool try_lock() { return pth_mutex_acquire(&m_, TRUE, nullptr) != 0; }
        void unlock() { pth_mutex_release(&m_); }
        pth_mutex_t* native() { return &m_; }

      private:
        pth_mutex_t m_;
    };

    class CondVar {
      public:
        CondVar() { pth_cond_init(&c_); }
        void wait(Mutex& held) { pth_cond_await(&c_, held.native(), nullptr); }
        void notify_one() { pth_cond_notify(&c_, FALSE); }
        void notify_all() { pth_cond_notify(&c_, TRUE); }

      private:
        pth_cond_t c_;
    };

    // Pth has no semaphore: a count guarded by a Mutex, waiters on a CondVar.
    class Semaphore {
      public:
        explicit Semaphore(std::ptrdiff_t initial) : count_(initial) {}
        void acquire() {
            m_.lock();
            while (count_ == 0) cv_.wait(m_);
            --count_;
            m_.unlock();
        }
        void release() {
            m_.lock();
            ++count_;
            cv_.notify_one();
            m_.unlock();
        }

      private:
        Mutex m_;
        CondVar cv_;
        std::ptrdiff_t count_;
    };

    // Runtime — pth_init/pth_kill around the run; `main` runs as a Pth thread. One OS
    // thread: the registration fixes max_processors=1, and `pin` keeps that thread on one
    // core of those this process may use.
    class Runtime {
      public:
        explicit Runtime(const RuntimeOptions& o) {
            if (o.processors != 1) throw std::runtime_error("pth runs on one processor, got P=" + std::to_string(o.processors));
            if (o.pin) {
                cpu_set_t allowed;
                if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
                    for (int c = 0; c < CPU_SETSIZE; ++c)
                        if (CPU_ISSET(c, &allowed)) {
                            cpu_set_t one;
                            CPU_ZERO(&one);
                            CPU_SET(c, &one);
                            sched_setaffinity(0, sizeof one, &one);
                            break;
                        }
            }
            if (!pth_init()) throw std::runtime_error(std::string("pth_init: ") + std::strerror(errno));
            stack_size = o.stack_size;
        }
        ~Runtime() {
            stack_size = 0;
            pth_kill();
        }
        Runtime(const Runtime&) = delete;
        Runtime& operator=(const Runtime&) = delete;

        template <class F>
        void run(F&& main) {
            spawn(std::forward<F>(main)).join();
        }
    };
};

}  // namespace coopbench

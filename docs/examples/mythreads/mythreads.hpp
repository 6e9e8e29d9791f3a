// mythreads.hpp — backend `mythreads`: std::thread with std::mutex & co.
#pragma once

#include <condition_variable>
#include <mutex>
#include <semaphore>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "runtimes/concept.hpp"

namespace coopbench {

struct MyThreadsBackend {
    static constexpr std::string_view name = "mythreads";
    static constexpr bool preemptive = true;

    class Thread {
      public:
        Thread() = default;
        explicit Thread(std::thread t) : t_(std::move(t)) {}
        Thread(Thread&&) noexcept = default;
        Thread& operator=(Thread&& o) noexcept { join(); t_ = std::move(o.t_); return *this; }
        ~Thread() { join(); }
        void join() { if (t_.joinable()) t_.join(); }

      private:
        std::thread t_;
    };

    template <class F>
    static Thread spawn(F&& fn) {
        try {
            return Thread(std::thread(std::forward<F>(fn)));
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
        explicit Runtime(const RuntimeOptions&) {}
        template <class F>
        void run(F&& main) { spawn(std::forward<F>(main)).join(); }
    };
};

}  // namespace coopbench

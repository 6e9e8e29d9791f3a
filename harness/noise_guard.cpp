#include "harness/noise_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace coopbench {

double ProcReader::load1() const {
    std::ifstream in(root / "loadavg");
    double l = -1;
    if (!(in >> l)) return -1;
    return l;
}

int ProcReader::runnable() const {
    std::ifstream in(root / "stat");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("procs_running ", 0) == 0) {
            try {
                // procs_running counts the reader itself, which is running as it reads.
                return std::max(0, std::stoi(line.substr(14)) - 1);
            } catch (...) {
                return -1;
            }
        }
    return -1;
}

int settled_runnable(const std::function<int()>& read, int samples, const std::function<void()>& wait) {
    int fewest = -1;
    for (int i = 0; i < samples; ++i) {
        if (i > 0) wait();
        const int r = read();
        if (r < 0) return -1;
        if (fewest < 0 || r < fewest) fewest = r;
        if (fewest == 0) break;  // cannot go lower
    }
    return fewest;
}

int ProcReader::runnable_settled() const {
    return settled_runnable([this] { return runnable(); }, 5,
                            [] { std::this_thread::sleep_for(std::chrono::microseconds(500)); });
}

namespace {
// cpu_times — the first fields of /proc/stat's "cpu" line (user nice system idle iowait irq
// softirq steal; guest time is already in user/nice) into f; how many were read, -1 when
// the file or the line is missing.
int cpu_times(const std::filesystem::path& root, double (&f)[8]) {
    std::ifstream in(root / "stat");
    std::string label;
    if (!(in >> label) || label != "cpu") return -1;
    int got = 0;
    while (got < 8 && in >> f[got]) ++got;
    return got;
}
}  // namespace

double ProcReader::busy_seconds() const {
    double f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (cpu_times(root, f) < 4) return -1;
    return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * tick_seconds();
}

double ProcReader::steal_seconds() const {
    double f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (cpu_times(root, f) < 8) return -1;  // steal is the 8th field (Linux 2.6.11 and later)
    return f[7] * tick_seconds();
}

unsigned ProcReader::cpus() const {
    std::ifstream in(root / "stat");
    unsigned n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.size() > 3 && line.rfind("cpu", 0) == 0 && std::isdigit(static_cast<unsigned char>(line[3]))) ++n;
    return n;
}

double ProcReader::tick_seconds() {
    static const double t = [] {
        const long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? 1.0 / static_cast<double>(hz) : 0.01;
    }();
    return t;
}

double other_cpus(double busy_before, double busy_after, double own, double wall, unsigned cpus, double tick) {
    if (busy_before < 0 || busy_after < 0 || wall <= 0) return -1;
    const double rounding = static_cast<double>(cpus == 0 ? 1 : cpus) * tick;
    const double other = busy_after - busy_before - std::max(own, 0.0) - rounding;
    return std::max(other, 0.0) / wall;
}

double steal_cpus(double steal_before, double steal_after, double wall, unsigned cpus, double tick) {
    if (steal_before < 0 || steal_after < 0 || wall <= 0) return -1;
    const double rounding = static_cast<double>(cpus == 0 ? 1 : cpus) * tick;
    return std::max(steal_after - steal_before - rounding, 0.0) / wall;
}

bool is_noisy(const Noise& n, unsigned cores, unsigned processors) {
    const int free_cores = processors >= cores ? 0 : static_cast<int>(cores - processors);
    return std::max(n.runnable_before, n.runnable_after) > free_cores ||
           // half a core of slack: the driver itself, interrupts, the kernel's own threads
           n.other_cpus > static_cast<double>(free_cores) + 0.5;
}

}  // namespace coopbench

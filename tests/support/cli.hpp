// cli.hpp — `coopbench ARGS...` (coopbench::cli_main, the binary's own entry) run in a forked
// child by the shared fork runner, with `env` set in the child only: a test's process keeps
// no state of the run (link coopbench_driver).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "tests/support/child.hpp"

namespace coopbench::test {

// cli_here — `coopbench ARGS...` in this process; its exit code.
inline int cli_here(std::vector<std::string> args) {
    args.insert(args.begin(), "coopbench");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return cli_main(static_cast<int>(args.size()), argv.data());
}

// cli_in_child — `coopbench ARGS...` in a child; its exit code, or -1 (a test failure that
// says why) when the child crashed or ran past `seconds`.
inline int cli_in_child(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                        int seconds = 600) {
    const std::string r = in_child(
        [&] {
            for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
            return std::to_string(cli_here(args));
        },
        seconds);
    try {
        return std::stoi(r);
    } catch (const std::exception&) {
        ADD_FAILURE() << "coopbench " << (args.empty() ? std::string() : args.front()) << ": " << r;
        return -1;
    }
}

}  // namespace coopbench::test

// test_ctest_rule — the test infrastructure's own test: a GoogleTest binary that exits 0 in
// the middle of a test must fail under CTest (tests/support/gtest_run.sh, set for every
// binary by coopbench_add_test). This binary's only test calls std::exit(0) before
// GoogleTest can print a result. CTest registers it through coopbench_add_test, like every
// other test, with PASS_REGULAR_EXPRESSION set to gtest_run.sh's verdict: it passes only
// when the runner reported the premature exit. With CTest's bare exit-status rule the
// binary exits 0, the verdict is never printed and this test fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

TEST(CtestPassRule, ABinaryThatExitsZeroMidTestIsAFailure) {
    std::printf("about to exit(0) in the middle of a test\n");
    std::fflush(stdout);
    std::exit(0);
}

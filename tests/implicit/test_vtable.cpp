// test_vtable.cpp — the vtable mix (vtable_mix.cpp): linked into two executables, the
// checked object first (VT_CHECKED_FIRST) or the plain one first. Either way an object
// built in the checked translation unit runs the checked copy of its inline virtual
// function and one built in the plain unit the plain copy.
#include <gtest/gtest.h>

#include "runtimes/native/quantum.hpp"

extern "C" long coop_vtable_call_checked(long);
extern "C" long coop_vtable_call_plain(long);
extern "C" [[gnu::noinline]] long coop_vtable_ext(long x) { return x * 3 + 1; }

namespace {
// charged — quantum units the call charged on this (non-worker) thread: > 0 when it ran
// checked code, 0 when it ran plain code. The counter starts far from expiry.
long charged(long (*f)(long)) {
    constexpr std::int32_t kStart = 1 << 30;
    coop_quantum_left = kStart;
    EXPECT_NE(f(1000), -1);
    return kStart - coop_quantum_left;
}
}  // namespace

#if defined(VT_CHECKED_FIRST)
TEST(ImplicitVtable, CopiesStayApartCheckedLinkedFirst) {
#else
TEST(ImplicitVtable, CopiesStayApartPlainLinkedFirst) {
#endif
    EXPECT_GT(charged(&coop_vtable_call_checked), 0) << "the checked unit's object ran the plain copy";
    EXPECT_EQ(charged(&coop_vtable_call_plain), 0) << "the plain unit's object ran the checked copy";
}

// test_vtable.cpp — the vtable mix (vtable_mix.cpp): linked into two executables, the
// checked object first (VT_CHECKED_FIRST) or the plain one first. Either way an object
// built in the checked translation unit runs the checked copy of its inline virtual
// function and one built in the plain unit the plain copy.
#include <gtest/gtest.h>

#include "coop/quantum.hpp"

extern "C" long vtable_call_checked(long);
extern "C" long vtable_call_plain(long);
extern "C" void* odr_loop_addr_checked();
extern "C" void* odr_loop_addr_plain();
extern "C" void* odr_lambda_addr_checked();
extern "C" void* odr_lambda_addr_plain();
extern "C" int* odr_counter_addr_checked();
extern "C" int* odr_counter_addr_plain();
extern "C" long odr_direct_call_checked(long);
extern "C" long odr_keyed_call_checked(long);
extern "C" long odr_keyed_call_plain(long);
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
    EXPECT_GT(charged(&vtable_call_checked), 0) << "the checked unit's object ran the plain copy";
    EXPECT_EQ(charged(&vtable_call_plain), 0) << "the plain unit's object ran the checked copy";
}

// One definition per function (docs/implicit.md, "Shared definitions"): an inline function
// and a header lambda's function have one address whichever unit takes it, and a static
// local is shared. Seen failing before: the checked unit's copies were internal, so each
// unit had its own address.
#if defined(VT_CHECKED_FIRST)
TEST(ImplicitOdr, InlineFunctionsHaveOneAddressCheckedLinkedFirst) {
#else
TEST(ImplicitOdr, InlineFunctionsHaveOneAddressPlainLinkedFirst) {
#endif
    EXPECT_EQ(odr_loop_addr_checked(), odr_loop_addr_plain());
    EXPECT_EQ(odr_lambda_addr_checked(), odr_lambda_addr_plain());
    EXPECT_EQ(odr_counter_addr_checked(), odr_counter_addr_plain());
    EXPECT_GT(charged(&odr_direct_call_checked), 0) << "the checked unit's direct call ran the plain copy";
}

// A class whose key function is in the checked unit: its vtable, emitted there (strong), is
// the one the plain unit's objects use, and it must hold the plain copies. Seen failing
// before: its slot was the checked copy, so the plain unit's object ran checked code.
#if defined(VT_CHECKED_FIRST)
TEST(ImplicitOdr, StrongVtableHoldsPlainCopiesCheckedLinkedFirst) {
#else
TEST(ImplicitOdr, StrongVtableHoldsPlainCopiesPlainLinkedFirst) {
#endif
    EXPECT_EQ(charged(&odr_keyed_call_plain), 0) << "the plain unit's object ran the checked copy";
    EXPECT_GT(charged(&odr_keyed_call_checked), 0) << "the checked unit's object ran the plain copy";
}

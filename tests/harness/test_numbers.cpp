// parse_integer: what users type for sizes (--param, --processors, --benchmark_repetitions),
// exactly or an error: no wrap-around, no fraction rounded away, no trailing garbage.
#include <gtest/gtest.h>

#include "harness/numbers.hpp"

using coopbench::parse_integer;

namespace {
std::optional<std::int64_t> parse(const std::string& s, std::string* why_out = nullptr) {
    std::string why;
    auto v = parse_integer(s, why);
    if (why_out) *why_out = why;
    return v;
}
}  // namespace

TEST(ParseInteger, AcceptsWhatUsersType) {
    EXPECT_EQ(parse("0"), 0);
    EXPECT_EQ(parse("100000"), 100000);
    EXPECT_EQ(parse("-4"), -4);
    EXPECT_EQ(parse("+7"), 7);
    EXPECT_EQ(parse("1e6"), 1000000);
    EXPECT_EQ(parse("1E6"), 1000000);
    EXPECT_EQ(parse("2.5e3"), 2500);
    EXPECT_EQ(parse("1.000"), 1);
    EXPECT_EQ(parse("1000e-3"), 1);
    EXPECT_EQ(parse("1500e-2"), 15);
    EXPECT_EQ(parse(".5e1"), 5);
    EXPECT_EQ(parse("10^6"), 1000000);
    EXPECT_EQ(parse("2^10"), 1024);
    EXPECT_EQ(parse("10^0"), 1);
    EXPECT_EQ(parse("0^5"), 0);
    EXPECT_EQ(parse("1^999999"), 1);
    EXPECT_EQ(parse("0e999999999"), 0);
    EXPECT_EQ(parse("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(parse("-9223372036854775808"), INT64_MIN);
    EXPECT_EQ(parse("9.223372036854775807e18"), INT64_MAX);
    EXPECT_EQ(parse("10^18"), 1000000000000000000);
    EXPECT_EQ(parse("000123"), 123);
    // Where the parts of a decimal meet: a bare dot on either side, a zero mantissa under a
    // huge exponent of either sign, a sign on a zero.
    EXPECT_EQ(parse("5."), 5);
    EXPECT_EQ(parse("1.5e1"), 15);
    EXPECT_EQ(parse("0.0e-9999999"), 0);
    EXPECT_EQ(parse(".0e9999999"), 0);
    EXPECT_EQ(parse("-0"), 0);
    EXPECT_EQ(parse("+0e+3"), 0);
}

TEST(ParseInteger, RejectsOverflowInsteadOfWrapping) {
    for (std::string s : {"9223372036854775808", "-9223372036854775809", "99999999999999999999", "10^19", "10^30",
                          "2^63", "1e19", "1e400", "1e9999999", "9.3e18", "123456789012345678901234567890"}) {
        std::string why;
        EXPECT_FALSE(parse(s, &why).has_value()) << s << " became " << parse(s).value_or(0);
        EXPECT_EQ(why, "is out of range") << s;
    }
}

TEST(ParseInteger, RejectsFractionsInsteadOfRounding) {
    for (std::string s : {"1e-3", "2.5", "0.1", "15e-1", "10^-2", "1e-9999999"}) {
        std::string why;
        EXPECT_FALSE(parse(s, &why).has_value()) << s << " became " << parse(s).value_or(0);
        EXPECT_EQ(why, "is not a whole number") << s;
    }
}

TEST(ParseInteger, RejectsGarbage) {
    for (std::string s : {"", "-", "+", "abc", "12abc", "1e", "e5", "1e+", "1.2.3", ".", "1 0", " 1", "1,000", "0x10",
                          "10^", "^3", "10^x", "1e6e2", "--1", "1e5.5", "nan", "inf"}) {
        std::string why;
        EXPECT_FALSE(parse(s, &why).has_value()) << "'" << s << "' became " << parse(s).value_or(0);
        EXPECT_EQ(why, "is not a number") << "'" << s << "'";
    }
}

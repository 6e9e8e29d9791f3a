#include "harness/numbers.hpp"

#include <cctype>

namespace coopbench {

namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// magnitude — digits (no sign) times 10^scale as an unsigned 64-bit value; false on overflow.
bool magnitude(std::string_view digits, int scale, std::uint64_t& out) {
    std::uint64_t v = 0;
    for (char c : digits)
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(c - '0'), &v))
            return false;
    for (int i = 0; i < scale && v != 0; ++i)
        if (__builtin_mul_overflow(v, 10u, &v)) return false;
    out = v;
    return true;
}

std::optional<std::int64_t> signed_value(bool negative, std::uint64_t mag, std::string& why) {
    const std::uint64_t max = static_cast<std::uint64_t>(INT64_MAX);
    if (mag > max + (negative ? 1 : 0)) {
        why = "is out of range";
        return std::nullopt;
    }
    if (!negative) return static_cast<std::int64_t>(mag);
    return mag == max + 1 ? INT64_MIN : -static_cast<std::int64_t>(mag);
}

// parse_power — "B^K" (after the sign) with integers B and K >= 0, or nullopt with `why`.
std::optional<std::int64_t> parse_power(std::string_view s, std::size_t caret, bool negative, std::string& why) {
    const std::string_view base = s.substr(0, caret), exp = s.substr(caret + 1);
    if (!all_digits(base)) return std::nullopt;
    if (!exp.empty() && exp[0] == '-' && all_digits(exp.substr(1))) {
        why = "is not a whole number";
        return std::nullopt;
    }
    if (!all_digits(exp)) return std::nullopt;
    std::uint64_t b = 0, v = 1;
    if (!magnitude(base, 0, b) || exp.size() > 6) {
        why = "is out of range";
        return std::nullopt;
    }
    const long k = std::stol(std::string(exp));
    for (long i = 0; i < k && v != 0 && !(b <= 1 && i > 0); ++i)
        if (__builtin_mul_overflow(v, b, &v)) {
            why = "is out of range";
            return std::nullopt;
        }
    if (b == 0 && k > 0) v = 0;
    return signed_value(negative, v, why);
}

// split_mantissa — `mant`'s digits before and after its dot (either may be empty, not
// both); false when it is not digits with at most one dot.
bool split_mantissa(std::string_view mant, std::string_view& whole, std::string_view& frac) {
    whole = mant;
    frac = {};
    const auto dot = mant.find('.');
    if (dot == std::string_view::npos) return all_digits(whole);
    whole = mant.substr(0, dot);
    frac = mant.substr(dot + 1);
    if (whole.empty() && frac.empty()) return false;
    return (whole.empty() || all_digits(whole)) && (frac.empty() || all_digits(frac));
}

// exponent_digits — the digits of an exponent (what follows e/E: an optional sign, then
// digits), or nullopt when it is not one.
std::optional<std::string_view> exponent_digits(std::string_view exp) {
    const std::string_view d = (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) ? exp.substr(1) : exp;
    if (!all_digits(d)) return std::nullopt;
    return d;
}

// whole_magnitude — the value of the digits `whole` and `frac` times 10^scale, when it is a
// whole number an unsigned 64-bit value holds; else nullopt with `why`. Leading zeros are
// dropped, then trailing zeros while the scale is negative: a negative scale left means a
// fraction.
std::optional<std::uint64_t> whole_magnitude(std::string_view whole, std::string_view frac, long scale,
                                             std::string& why) {
    std::string digits = std::string(whole) + std::string(frac);
    scale -= static_cast<long>(frac.size());
    const auto first = digits.find_first_not_of('0');
    if (first == std::string::npos) return 0;
    digits.erase(0, first);
    while (scale < 0 && !digits.empty() && digits.back() == '0') {
        digits.pop_back();
        ++scale;
    }
    if (scale < 0) {
        why = "is not a whole number";
        return std::nullopt;
    }
    std::uint64_t mag = 0;
    if (digits.size() > 20 || scale > 19 || !magnitude(digits, static_cast<int>(scale), mag)) {
        why = "is out of range";
        return std::nullopt;
    }
    return mag;
}

// parse_decimal — "M" or "MeX" (after the sign): a decimal mantissa M (digits, optionally
// with a fraction) and an exponent X whose value is whole; else nullopt with `why`.
std::optional<std::int64_t> parse_decimal(std::string_view s, bool negative, std::string& why) {
    std::string_view mant = s, exp = "0";
    if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
        mant = s.substr(0, e);
        exp = s.substr(e + 1);
    }
    const auto exp_digits = exponent_digits(exp);
    std::string_view whole, frac;
    if (!exp_digits || !split_mantissa(mant, whole, frac)) return std::nullopt;
    if (exp_digits->size() > 6) {
        // 1e1000000 or 1e-1000000: nothing an int64 holds unless the mantissa is zero.
        why = exp[0] == '-' ? "is not a whole number" : "is out of range";
        if (mant.find_first_not_of("0.") == std::string_view::npos) return 0;
        return std::nullopt;
    }
    const long scale = std::stol(std::string(*exp_digits)) * (exp[0] == '-' ? -1 : 1);
    const auto mag = whole_magnitude(whole, frac, scale, why);
    if (!mag) return std::nullopt;
    return signed_value(negative, *mag, why);
}

}  // namespace

std::optional<std::int64_t> parse_integer(std::string_view text, std::string& why) {
    why = "is not a number";
    std::string_view s = text;
    bool negative = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty()) return std::nullopt;
    if (auto caret = s.find('^'); caret != std::string_view::npos) return parse_power(s, caret, negative, why);
    return parse_decimal(s, negative, why);
}

}  // namespace coopbench

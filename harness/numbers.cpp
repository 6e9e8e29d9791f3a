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

    // B^K
    if (auto caret = s.find('^'); caret != std::string_view::npos) {
        std::string_view base = s.substr(0, caret), exp = s.substr(caret + 1);
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

    // mantissa [e exponent]
    std::string_view mant = s, exp;
    if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
        mant = s.substr(0, e);
        exp = s.substr(e + 1);
        std::string_view d = (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) ? exp.substr(1) : exp;
        if (!all_digits(d)) return std::nullopt;
    }
    std::string_view whole = mant, frac;
    if (auto dot = mant.find('.'); dot != std::string_view::npos) {
        whole = mant.substr(0, dot);
        frac = mant.substr(dot + 1);
        if ((!whole.empty() && !all_digits(whole)) || (!frac.empty() && !all_digits(frac)) ||
            (whole.empty() && frac.empty()))
            return std::nullopt;
    } else if (!all_digits(whole)) {
        return std::nullopt;
    }
    long scale = 0;
    if (!exp.empty()) {
        const bool neg = exp[0] == '-';
        std::string_view d = (exp[0] == '-' || exp[0] == '+') ? exp.substr(1) : exp;
        if (d.size() > 6) {
            // 1e1000000 or 1e-1000000: nothing an int64 holds unless the mantissa is zero.
            why = neg ? "is not a whole number" : "is out of range";
            bool zero = true;
            for (char c : mant)
                if (c != '0' && c != '.') zero = false;
            if (zero) return 0;
            return std::nullopt;
        }
        scale = std::stol(std::string(d)) * (neg ? -1 : 1);
    }
    // value = (whole frac) * 10^(scale - |frac|); drop leading zeros, then trailing zeros
    // while the scale is negative; a negative scale left means a fraction.
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
    return signed_value(negative, mag, why);
}

}  // namespace coopbench

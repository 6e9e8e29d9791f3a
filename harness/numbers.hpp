// numbers.hpp — integers as users type them on the command line: "100000", "1e6", "2.5e3",
// "10^6". Exactly what was typed or an error: no wrap-around on overflow, no fraction
// rounded away (1e-3 is not 1), no trailing garbage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace coopbench {

// parse_integer — the integer `text` denotes, or nullopt with `why` set to one of
// "is not a number", "is not a whole number", "is out of range". Accepted forms: an
// optional sign and decimal digits; a decimal mantissa (digits, optionally with a fraction)
// with an exponent e/E (sign allowed) whose value is whole; B^K with integers B and K >= 0.
std::optional<std::int64_t> parse_integer(std::string_view text, std::string& why);

}  // namespace coopbench

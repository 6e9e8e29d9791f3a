// csv.hpp — the CSV of results.csv (RFC 4180): quoting a field, splitting a line, writing a
// number. One parser for the writer (results.cpp), the resume repair (resume.cpp), merges
// (merge.cpp) and the tests.
#pragma once

#include <string>
#include <vector>

namespace coopbench {

// csv_field — quote a CSV field when needed (RFC 4180).
std::string csv_field(const std::string& s);

// parse_csv_line — split one CSV line (no embedded newlines) into fields.
std::vector<std::string> parse_csv_line(const std::string& line);

// csv_number — a number as results.csv writes it (10 significant digits; "" when not finite).
std::string csv_number(double x);

}  // namespace coopbench

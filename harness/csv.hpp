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

// clean_text — a text that came from a program (a reason, a line of its stderr, a counter's
// name) as every result file may hold it: valid UTF-8 (a byte that is not part of a valid
// UTF-8 sequence becomes U+FFFD, as Python's errors="replace" and nlohmann's
// error_handler_t::replace do), tab, newline and carriage return a space, every other C0
// control character and DEL written out as \xHH (ANSI colour's ESC becomes "\x1B"), so no NUL
// and no control character reaches results.csv, points.jsonl or benchmark.json (Google
// Benchmark 1.7.1's JSON writer escapes only \b \f \n \r \t). Clean text stays as it is.
std::string clean_text(const std::string& s);

// cut_text — `s` cut to at most `bytes` bytes at a UTF-8 character boundary, "..." added when
// cut (a cut inside a character would leave an invalid byte sequence).
std::string cut_text(const std::string& s, std::size_t bytes);

}  // namespace coopbench

// csv.hpp — the tests' one CSV reader: a results.csv as rows of fields or as maps from
// column name to value, split by the harness's own parser (coopbench::parse_csv_line,
// harness/results.hpp; link coopbench_driver).
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "harness/results.hpp"

namespace coopbench::test {

// csv_rows — every line of the file (header first) as fields; an empty file gives none.
inline std::vector<std::vector<std::string>> csv_rows(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) rows.push_back(parse_csv_line(line));
    }
    return rows;
}

// csv_table — the rows after the header as maps from column name to value.
inline std::vector<std::map<std::string, std::string>> csv_table(const std::filesystem::path& path) {
    const auto rows = csv_rows(path);
    std::vector<std::map<std::string, std::string>> out;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        std::map<std::string, std::string> m;
        for (std::size_t i = 0; i < rows[0].size() && i < rows[r].size(); ++i) m[rows[0][i]] = rows[r][i];
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace coopbench::test

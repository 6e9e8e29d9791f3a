#include "harness/schema.hpp"

#include "results_schema.hpp"  // generated from harness/schema.json (CMake)

namespace coopbench {

const nlohmann::json& schema() {
    static const nlohmann::json j = nlohmann::json::parse(kResultsSchemaJson);
    return j;
}

std::vector<std::string> schema_columns() {
    std::vector<std::string> names;
    for (auto& c : schema().at("columns")) names.push_back(c.at("name").get<std::string>());
    return names;
}

namespace {
// "backend.<NAME>.<KEY>" matches "backend.go.go_version": <NAME> is one dotted part, <KEY>
// the rest.
bool key_matches(const std::string& pattern, const std::string& key) {
    if (pattern.find('<') == std::string::npos) return pattern == key;
    std::size_t p = 0, k = 0;
    while (p < pattern.size()) {
        if (pattern[p] == '<') {
            const auto close = pattern.find('>', p);
            const bool rest = pattern.compare(p, close - p + 1, "<KEY>") == 0;
            p = close + 1;
            const auto end = rest ? key.size() : key.find('.', k);
            if (end == std::string::npos || end == k) return false;
            k = end;
        } else {
            if (k >= key.size() || key[k] != pattern[p]) return false;
            ++p, ++k;
        }
    }
    return k == key.size();
}

bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "int") return v.is_number_integer();
    if (type == "float") return v.is_number();
    if (type == "bool") return v.is_boolean();
    if (type == "json") return v.is_object();
    return false;
}
}  // namespace

std::vector<std::string> context_problems(const nlohmann::json& context) {
    std::vector<std::string> out;
    if (!context.is_object()) return {"context is not a JSON object"};
    const auto& keys = schema().at("context");
    for (auto& [k, v] : context.items()) {
        const nlohmann::json* entry = nullptr;
        for (auto& e : keys)
            if (key_matches(e.at("name").get<std::string>(), k)) { entry = &e; break; }
        if (!entry) {
            out.push_back("key '" + k + "' is not in schema.json's context");
            continue;
        }
        const std::string type = entry->at("type").get<std::string>();
        if (v.is_null()) {
            const bool differs = context.contains("differing") && context["differing"].is_object() &&
                                 context["differing"].contains(k);
            if (!entry->contains("null") && !differs)
                out.push_back("key '" + k + "' is null, which schema.json gives no meaning");
        } else if (!has_type(v, type)) {
            out.push_back("key '" + k + "' is " + v.type_name() + ", schema.json says " + type);
        }
    }
    for (auto& e : keys)
        if (e.at("when") == "run" && !context.contains(e.at("name").get<std::string>()))
            out.push_back("key '" + e.at("name").get<std::string>() + "' (written by every run) is missing");
    return out;
}

}  // namespace coopbench

// The ceiling for one parsing thread: RapidJSON's SAX reader over a whole JSON file already in memory
// (its fastest stream, with SSE2), calling a handler that does nothing. The Kineto importer parses the
// same way, with real work per value, so it cannot beat this. Usage: bench_json_ceiling FILE.json

#define RAPIDJSON_SSE2 // baseline x86-64: no -m flags needed
#include <chrono>
#include <cstdio>
#include <fstream>
#include <rapidjson/reader.h>
#include <sstream>
#include <string>

namespace {

struct CountingHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, CountingHandler> {
    size_t values = 0;
    bool Default() { return ++values; }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return ++values; }
    bool String(const char*, rapidjson::SizeType, bool) { return ++values; }
    bool Key(const char*, rapidjson::SizeType, bool) { return ++values; }
};

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bench_json_ceiling FILE.json  (uncompressed; read whole into memory)\n");
        return 2;
    }
    std::ifstream file(argv[1], std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    if (!file || json.empty()) {
        fprintf(stderr, "bench_json_ceiling: cannot read %s\n", argv[1]);
        return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    rapidjson::StringStream stream(json.c_str());
    CountingHandler handler;
    rapidjson::Reader reader;
    // The importer's flags: numbers as text (exact timestamps), NaN and Infinity accepted.
    const auto result
        = reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag>(stream, handler);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (result.IsError()) {
        fprintf(stderr, "bench_json_ceiling: %s is not valid JSON (offset %zu)\n", argv[1], result.Offset());
        return 1;
    }
    printf("%zu values in %.0f MB: %.2f s, %.0f MB/s\n", handler.values, double(json.size()) / 1e6, seconds,
        double(json.size()) / 1e6 / seconds);
    return 0;
}

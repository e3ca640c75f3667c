// Runs a fuzz target's LLVMFuzzerTestOneInput on every file of the folders (or files) it is given, the
// way libFuzzer replays a corpus, without libFuzzer: so that every build's tests (and the asan preset)
// read the seed corpora, each a hostile or odd input that once broke a reader or a command.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; ++i) {
        std::error_code ec;
        if (fs::is_directory(argv[i], ec)) {
            for (const auto& entry : fs::directory_iterator(argv[i]))
                if (entry.is_regular_file()) inputs.push_back(entry.path());
        } else {
            inputs.emplace_back(argv[i]);
        }
    }
    if (inputs.empty()) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...: no input found\n", argv[0]);
        return 2;
    }
    for (const fs::path& input : inputs) {
        FILE* in = fopen(input.c_str(), "rb");
        if (!in) {
            fprintf(stderr, "%s: cannot be read\n", input.c_str());
            return 2;
        }
        std::string bytes;
        char buffer[65536];
        for (size_t n; (n = fread(buffer, 1, sizeof buffer, in)) > 0;)
            bytes.append(buffer, n);
        fclose(in);
        fprintf(stderr, "replaying %s (%zu bytes)\n", input.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    fprintf(stderr, "%zu inputs replayed\n", inputs.size());
    return 0;
}

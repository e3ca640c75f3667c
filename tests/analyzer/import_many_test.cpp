// Importing a job's files side by side: the models come back in the order given, the first failing
// file (in that order) is the error, and progress ends with every file done.

#include "import/import_many.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

class ImportManyTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return m_dir + "/" + name; }
    tuneup::test::TempDir m_tmp { "tuneup_import_many" };
    std::string m_dir = m_tmp.path();
};

} // namespace

TEST_F(ImportManyTest, ModelsComeBackInTheOrderGiven) {
    std::vector<std::string> files;
    for (int i = 0; i < 5; ++i) {
        tuneup::test::TraceSpec spec;
        spec.kernels = i + 1; // tells the files apart
        files.push_back(path("rank" + std::to_string(i) + ".db"));
        tuneup::test::writeTrace(files.back(), spec);
    }
    size_t lastDone = 0, calls = 0;
    ImportManyOptions options;
    options.threads = 3;
    options.progress = [&](size_t done, uint64_t) {
        EXPECT_GE(done, lastDone);
        lastDone = done;
        ++calls;
    };
    const auto models = importTraces(files, options);
    ASSERT_EQ(models.size(), 5u);
    for (size_t i = 0; i < models.size(); ++i) {
        EXPECT_EQ(models[i].kernels.size(), i + 1);
        EXPECT_EQ(models[i].info.path, files[i]);
    }
    EXPECT_EQ(lastDone, 5u);
    EXPECT_GE(calls, 5u);
}

TEST_F(ImportManyTest, TheFirstBadFileInOrderIsTheError) {
    tuneup::test::writeTrace(path("good.db"));
    std::ofstream(path("bad.db")) << "not a trace";
    const std::vector<std::string> files = { path("good.db"), path("missing.db"), path("bad.db") };
    try {
        importTraces(files);
        FAIL() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("missing.db"), std::string::npos) << e.what();
    }
}

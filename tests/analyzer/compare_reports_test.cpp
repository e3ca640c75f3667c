// tuneup compare's report formats (analyzer/lib/compare/compare_report.h): the JSON's fields as
// docs/compare.md gives them, Markdown that stays under 1 MiB whatever the traces hold, JUnit and CSV
// that escape what a trace may hold (quotes, angle brackets, commas, bytes that are not UTF-8).

#include "compare/compare_report.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sstream>

namespace tuneup::analysis {
namespace {

RunProfile side(double ms, size_t steps) {
    RunProfile p;
    p.inputs = { "base.db" };
    p.ranks = 1;
    for (size_t i = 0; i < steps; ++i)
        p.stepMs.push_back(ms * (1 + 0.01 * double(i % 4)));
    p.kernelSteps = steps;
    p.environment = { { "gpu.model", "NVIDIA A100-SXM4-80GB" } };
    return p;
}

KernelStat kernel(std::string name, int64_t calls, int64_t ns) {
    KernelStat k;
    k.name = std::move(name);
    k.kernelClass = classifyKernel(k.name);
    k.calls = calls;
    k.totalNs = ns;
    return k;
}

std::string render(
    void (*write)(std::ostream&, const CompareResult&, const CompareReportContext&), const CompareResult& r) {
    std::ostringstream out;
    write(out, r, CompareReportContext { "test", false });
    return out.str();
}

TEST(CompareReports, JsonHasTheDocumentedFields) {
    RunProfile a = side(100, 20), b = side(130, 20);
    b.inputs = { "new.db" };
    a.kernels = { kernel("volta_sgemm_128x64_nn", 200, 10'000'000) };
    b.kernels = { kernel("volta_sgemm_128x64_nn", 200, 20'000'000), kernel("new_kernel", 20, 1'000'000) };
    b.findings = { { "amp-unused", Severity::Warning, "fp32 GEMMs", 5'000'000 } };
    a.findings = { { "gpu-idle", Severity::Info, "idle", 0 } };
    const CompareResult r = compareProfiles(a, b);
    const std::string text = render(writeCompareJson, r);
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    ASSERT_FALSE(doc.HasParseError()) << text;
    EXPECT_EQ(doc["schema_version"].GetInt(), kCompareSchemaVersion);
    EXPECT_STREQ(doc["verdict"].GetString(), "regressed");
    const auto& step = doc["step_time"];
    for (const char* field : { "base_ms", "new_ms", "ratio", "threshold" })
        EXPECT_TRUE(step[field].IsNumber()) << field;
    ASSERT_TRUE(step["ratio_ci"].IsArray());
    ASSERT_EQ(step["ratio_ci"].Size(), 2u);
    EXPECT_LT(step["ratio_ci"][0].GetDouble(), step["ratio"].GetDouble());
    EXPECT_GT(step["ratio_ci"][1].GetDouble(), step["ratio"].GetDouble());
    EXPECT_TRUE(doc["breakdown"].IsArray());
    ASSERT_EQ(doc["kernels"].Size(), 2u);
    for (const auto& k : doc["kernels"].GetArray())
        for (const char* field : { "name", "class", "base_calls", "new_calls", "base_per_call_us", "new_per_call_us",
                 "per_call_ratio", "verdict" })
            EXPECT_TRUE(k.HasMember(field)) << field;
    const auto& gemm = doc["kernels"][0];
    EXPECT_STREQ(gemm["name"].GetString(), "volta_sgemm_128x64_nn");
    EXPECT_STREQ(gemm["class"].GetString(), "gemm");
    EXPECT_DOUBLE_EQ(gemm["per_call_ratio"].GetDouble(), 2.0);
    EXPECT_STREQ(gemm["verdict"].GetString(), "slower"); // no per-call durations: the ratio alone decides
    EXPECT_TRUE(doc["kernels"][1]["base_per_call_us"].IsNull()); // only in NEW: not measured, not 0
    EXPECT_STREQ(doc["findings"]["appeared"][0]["rule"].GetString(), "amp-unused");
    EXPECT_STREQ(doc["findings"]["resolved"][0]["rule"].GetString(), "gpu-idle");
    EXPECT_TRUE(doc["environment"].IsObject());
    EXPECT_STREQ(doc["environment"]["base"]["gpu.model"].GetString(), "NVIDIA A100-SXM4-80GB");
}

TEST(CompareReports, MarkdownStaysUnderOneMebibyteWhateverTheTracesHold) {
    // 20,000 kernels with 1 kB names, 200 findings with 100 kB titles and 200 changed settings: 24 MB of
    // text that a report without bounds would carry.
    RunProfile a = side(100, 20), b = side(200, 20);
    for (int i = 0; i < 20'000; ++i) {
        const std::string name = "kernel_" + std::to_string(i) + "<" + std::string(1000, 'T') + ">";
        a.kernels.push_back(kernel(name, 10, 1000 + i));
        b.kernels.push_back(kernel(name, 10, 2000 + i));
    }
    for (int i = 0; i < 200; ++i) {
        b.findings.push_back({ "rule-" + std::to_string(i), Severity::Warning, std::string(100'000, '|'), 1 });
        a.settings.emplace_back("setting." + std::to_string(i), std::string(100'000, 'a'));
    }
    const CompareResult r = compareProfiles(a, b);
    const std::string md = render(writeCompareMarkdown, r);
    EXPECT_LT(md.size(), size_t(1) << 20);
    EXPECT_NE(md.find("## tuneup compare: **regressed**"), std::string::npos);
    EXPECT_NE(md.find("more kernel names"), std::string::npos);
}

TEST(CompareReports, JunitHasOneCaseACheckAndEscapesWhatTracesHold) {
    RunProfile a = side(100, 20), b = side(150, 20);
    a.hasGpuWork = b.hasGpuWork = true;
    a.perStep = { 100'000'000, 90'000'000, 0, 10'000'000, 0, 0, 0, 0, 0, 0 };
    b.perStep = { 150'000'000, 90'000'000, 0, 60'000'000, 0, 0, 0, 0, 0, 0 };
    b.findings = { { "my-rule", Severity::Warning, "a <b> & \"c\" \xff\x01 title", 0 } };
    const CompareResult r = compareProfiles(a, b);
    const std::string xml = render(writeCompareJunit, r);
    // environment, step time, 8 breakdown parts, 1 finding; failing: step time, copies, the finding.
    EXPECT_NE(xml.find("tests=\"11\" failures=\"3\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("a &lt;b&gt; &amp; &quot;c&quot; \uFFFD title"), std::string::npos) << xml;
    EXPECT_EQ(xml.find('\x01'), std::string::npos);
    EXPECT_NE(xml.find("<testcase classname=\"tuneup.compare.breakdown\" name=\"Copies\">\n      <failure"),
        std::string::npos);
}

TEST(CompareReports, CsvQuotesNamesWithCommasAndQuotes) {
    RunProfile a = side(100, 20), b = side(100, 20);
    a.kernels = { kernel("void f<1, 2>(\"x\")", 10, 1000) };
    b.kernels = { kernel("void f<1, 2>(\"x\")", 10, 1000) };
    const std::string csv = render(writeCompareCsv, compareProfiles(a, b));
    EXPECT_EQ(csv.rfind("section,name,class,unit,base,new,delta,ratio,verdict\n", 0), 0u);
    EXPECT_NE(
        csv.find("kernel_per_call,\"void f<1, 2>(\"\"x\"\")\",other,us/call,0.1,0.1,0,1,same\n"), std::string::npos)
        << csv;
}

} // namespace
} // namespace tuneup::analysis

// The Markdown and HTML reports: on a synthetic trace built here (four 10 ms steps, kernels whose
// names hold <>&, pageable copies), on two ranks, and on a real Kineto trace from ../shared/traces.

#include "advise/rule_context.h"
#include "all_rules.h"
#include "four_step_trace.h"
#include "import/importer.h"
#include "model/trace_builder.h"
#include "report/report.h"
#include "report/report_helpers.h"
#include "shared_traces.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sstream>

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;

// Four steps of 10 ms (or `stepNs`): a 1 ms pageable copy, a 5 ms GEMM, a 2 ms fill, the rest idle.
TraceModel syntheticTrace(int rank = -1, int64_t stepNs = 10 * kMs) {
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic-" + std::to_string(rank) + ".json");
    if (rank >= 0) b.info().rank = rank;
    tuneup::test::addFourSteps(b, stepNs);
    return b.finish();
}

/** A rule whose finding carries markup in every text field, to check escaping. */
class MarkupRule final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "markup-test", "Markup", "Emits text with markup.", {} };
        return info;
    }
    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        Finding f;
        f.severity = Severity::Error;
        f.title = "kernel <script>alert(1)</script> & \"friends\" | *bold*";
        f.detail = "Line one <b>\nline two";
        f.evidence.facts = { { "name", "Array<char*, 1>" }, { "count", "3" } };
        f.evidence.events = { { EventTable::Kernel, 0 }, { EventTable::Kernel, 1 } };
        f.evidence.eventsTotal = 2;
        f.evidence.spans = { { context.model().kernels.startNs[0], context.model().kernels.endNs[0] } };
        f.gain = context.gain(3 * kMs, "a third of the <fill> time", "low");
        f.fixPython = "torch.backends.cudnn.benchmark = True  # a < b";
        f.fixCpp = "at::globalContext().setBenchmarkCuDNN(true); // ```";
        outcome.findings.push_back(std::move(f));
    }
};

/** A rule that needs torch settings: never evaluated on a Kineto trace. */
class NeedsFlagsRule final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "needs-flags-test", "Needs flags", "Needs torch flags.", { Input::TorchFlags } };
        return info;
    }
    void evaluate(const RuleContext&, RuleOutcome&) const override { }
};

/** A second rule that needs torch flags: not evaluated for the same reason as NeedsFlagsRule. */
class AlsoNeedsFlagsRule final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "also-needs-flags-test", "Also needs flags", "Needs torch flags.",
            { Input::TorchFlags } };
        return info;
    }
    void evaluate(const RuleContext&, RuleOutcome&) const override { }
};

// pageable-memcpy (the built-in rule this trace shows) and the two test rules: other built-in rules
// come and go without changing what these tests expect.
std::vector<std::unique_ptr<Rule>> testRules() {
    std::vector<std::unique_ptr<Rule>> rules;
    for (auto& rule : rules::builtinRules())
        if (rule->info().id == "pageable-memcpy") {
            rules.push_back(std::move(rule));
            break;
        }
    EXPECT_EQ(rules.size(), 1u);
    rules.push_back(std::make_unique<MarkupRule>());
    rules.push_back(std::make_unique<NeedsFlagsRule>());
    return rules;
}

size_t count(const std::string& text, std::string_view what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
        ++n;
    return n;
}

struct Rendered {
    std::vector<TraceModel> models;
    AdviceReport report;
    std::string markdown, html;
};

Rendered render(std::vector<TraceModel> models) {
    Rendered r;
    r.models = std::move(models);
    r.report = advise(r.models, testRules(), {});
    ReportContext context;
    context.toolVersion = "9.9.9";
    std::ostringstream md, html;
    writeMarkdownReport(md, r.report, context);
    writeHtmlReport(html, r.report, context);
    r.markdown = md.str();
    r.html = html.str();
    return r;
}

Rendered renderOne() {
    std::vector<TraceModel> models;
    models.push_back(syntheticTrace());
    return render(std::move(models));
}

} // namespace

TEST(MarkdownReport, ListsStepsFindingsFixesAndDocs) {
    const Rendered r = renderOne();
    const std::string& md = r.markdown;
    ASSERT_EQ(r.report.ranks.front().steps.detection.steps.size(), 4u);
    EXPECT_NE(md.find("# tuneup advice"), std::string::npos);
    EXPECT_NE(md.find("4 steps from ProfilerStep#N ranges, median **10 ms**"), std::string::npos) << md;
    // The median breakdown table: GEMM + fill = 7 ms of compute, 1 ms of copies, 2 ms idle.
    EXPECT_NE(md.find("| GPU compute | 7 ms (70%) |"), std::string::npos) << md;
    EXPECT_NE(md.find("| Copies | 1 ms (10%) |"), std::string::npos) << md;
    // Ranked by gain: the markup rule (3 ms) before pageable-memcpy (0.5 ms).
    const size_t markup = md.find("### 1. `markup-test`"), pageable = md.find("### 2. `pageable-memcpy`");
    ASSERT_NE(markup, std::string::npos) << md;
    ASSERT_NE(pageable, std::string::npos) << md;
    EXPECT_NE(md.find("| 2 | 🟠 warning | `pageable-memcpy` |"), std::string::npos) << md;
    // Fixes in fenced blocks, Python and C++; a fence longer than the backticks inside.
    EXPECT_NE(md.find("```python\nloader = DataLoader(dataset, ..., pin_memory=True)"), std::string::npos) << md;
    EXPECT_NE(md.find("```cpp\nauto pinned = batch.pin_memory();"), std::string::npos) << md;
    EXPECT_NE(md.find("````cpp\nat::globalContext().setBenchmarkCuDNN(true); // ```\n````"), std::string::npos) << md;
    EXPECT_NE(md.find("[rules/pageable-memcpy.md](<rules/pageable-memcpy.md>)"), std::string::npos) << md;
    EXPECT_NE(md.find("- pageable copies: 4"), std::string::npos) << md;
    // Rules without findings, with why.
    EXPECT_NE(md.find("## Not evaluated"), std::string::npos);
    EXPECT_NE(md.find("- `needs-flags-test`: needs torch settings"), std::string::npos) << md;
}

TEST(MarkdownReport, EscapesMarkupInText) {
    const std::string md = renderOne().markdown;
    EXPECT_EQ(md.find("<script>"), std::string::npos);
    EXPECT_EQ(md.find("<b>"), std::string::npos);
    EXPECT_NE(
        md.find("kernel &lt;script&gt;alert(1)&lt;/script&gt; &amp; \"friends\" \\| \\*bold\\*"), std::string::npos)
        << md;
    EXPECT_NE(md.find("- name: Array&lt;char\\*, 1&gt;"), std::string::npos) << md;
    // Code blocks are verbatim.
    EXPECT_NE(md.find("torch.backends.cudnn.benchmark = True  # a < b"), std::string::npos);
}

TEST(HtmlReport, IsOneSelfContainedPage) {
    const std::string html = renderOne().html;
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<style>"), std::string::npos);
    EXPECT_EQ(count(html, "</html>"), 1u);
    // Nothing fetched, nothing run: the only URL is the SVG namespace.
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find(" src="), std::string::npos);
    EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
}

TEST(HtmlReport, ChartsOneBarGroupPerStep) {
    const std::string html = renderOne().html;
    EXPECT_EQ(count(html, "<svg"), 1u);
    EXPECT_EQ(count(html, "<g class=\"step\">"), 4u);
    EXPECT_EQ(count(html, "<g class=\"rank\">"), 0u); // one rank: no comparison
    // Each step stacks compute, copies and host idle; the legend names every part.
    EXPECT_EQ(count(html, "<rect class=\"compute\""), 4u);
    EXPECT_EQ(count(html, "<rect class=\"memcpy\""), 4u);
    EXPECT_EQ(count(html, "<rect class=\"idle-host\""), 4u);
    for (const BreakdownPart& p : kBreakdownParts)
        EXPECT_NE(html.find(std::string(p.label) + "</span>"), std::string::npos) << p.label;
    EXPECT_NE(html.find("<title>step 0: 10 ms\nGPU compute 7 ms (70%)"), std::string::npos);
}

TEST(HtmlReport, TopKernelsEscapedAndRanked) {
    const std::string html = renderOne().html;
    const size_t table = html.find("<table class=\"kernels\">");
    ASSERT_NE(table, std::string::npos);
    const size_t gemm = html.find("volta_sgemm_128x64_nn", table),
                 fill = html.find("vectorized_elementwise_kernel", table);
    ASSERT_NE(gemm, std::string::npos);
    ASSERT_NE(fill, std::string::npos);
    EXPECT_LT(gemm, fill); // 20 ms before 8 ms
    EXPECT_NE(html.find("<td class=\"n\">4</td><td class=\"n\">20 ms</td><td class=\"n\">5 ms</td><td "
                        "class=\"n\">5 ms</td><td class=\"n\">71%</td>"),
        std::string::npos);
    // Kernel names: shortened (no "void", no parameters), every < and & escaped; the full name as tooltip.
    EXPECT_EQ(html.find("FillFunctor<float>"), std::string::npos);
    EXPECT_NE(html.find(">at::native::vectorized_elementwise_kernel&lt;4, at::native::FillFunctor&lt;float&gt;, "
                        "at::detail::Array&lt;char*, 1&gt; &gt;</code>"),
        std::string::npos);
    EXPECT_NE(html.find("title=\"void at::native::vectorized_elementwise_kernel&lt;4,"), std::string::npos);
}

TEST(HtmlReport, FindingsWithEvidenceFixesAndRules) {
    const std::string html = renderOne().html;
    EXPECT_EQ(html.find("<script>"), std::string::npos);
    EXPECT_NE(html.find("<h3>1. kernel &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;friends&quot; | *bold*</h3>"),
        std::string::npos);
    EXPECT_NE(html.find("<details><summary>Evidence (2 events)</summary>"), std::string::npos);
    EXPECT_NE(html.find("<tr><th>name</th><td>Array&lt;char*, 1&gt;</td></tr>"), std::string::npos);
    EXPECT_NE(html.find("Events (kernels rows): #0, #1"), std::string::npos);
    EXPECT_NE(html.find("Time ranges (from the start of the trace): +1 ms – +6 ms (5 ms)"), std::string::npos);
    EXPECT_NE(html.find("<h4>Fix — Python</h4><pre><code class=\"language-python\">loader = DataLoader(dataset, ..., "
                        "pin_memory=True)"),
        std::string::npos);
    EXPECT_NE(html.find("<h4>Fix — C++</h4><pre><code class=\"language-cpp\">auto pinned = batch.pin_memory();"),
        std::string::npos);
    EXPECT_NE(html.find("# a &lt; b"), std::string::npos);
    // The rule's documentation inside the page (tests/html/report_portable_test checks it further).
    EXPECT_NE(html.find("<details class=\"doc\" id=\"doc-pageable-memcpy\"><summary>Documentation of "
                        "<code>pageable-memcpy</code></summary>"),
        std::string::npos);
    EXPECT_NE(html.find("<h3>Not evaluated</h3>"), std::string::npos);
    EXPECT_NE(html.find("<code>needs-flags-test</code></td><td>needs torch settings"), std::string::npos);
}

TEST(HtmlReport, ComparesRanks) {
    std::vector<TraceModel> models;
    models.push_back(syntheticTrace(0));
    models.push_back(syntheticTrace(1, 11 * kMs)); // a slower step
    const Rendered r = render(std::move(models));
    EXPECT_EQ(count(r.html, "<g class=\"rank\">"), 2u);
    EXPECT_EQ(count(r.html, "<g class=\"step\">"), 8u);
    EXPECT_EQ(count(r.html, "<svg"), 3u); // ranks compared, then one chart per rank
    EXPECT_NE(r.html.find("<title>rank 1 median step: 11 ms"), std::string::npos);
    EXPECT_NE(r.markdown.find("| Median step | rank 0 | rank 1 |"), std::string::npos) << r.markdown;
    EXPECT_NE(r.markdown.find("| **Step** | **10 ms** | **11 ms** |"), std::string::npos) << r.markdown;
}

TEST(ReportHelpers, ShortKernelNames) {
    EXPECT_EQ(shortKernelName("volta_sgemm_128x64_nn"), "volta_sgemm_128x64_nn");
    EXPECT_EQ(shortKernelName("void foo<float>(float*, int)"), "foo<float>");
    EXPECT_EQ(shortKernelName("_Z6kernelPfi"), "kernel"); // demangled "kernel(float*, int)"
    EXPECT_EQ(shortKernelName("at::native::(anonymous namespace)::k<1>"), "at::native::(anonymous namespace)::k<1>");
    // Too long: inner template arguments fold first, then the outer ones, then the front is cut.
    EXPECT_EQ(shortKernelName("void a::b<c<d<e>>, f>(int)", 13), "a::b<c<…>, f>");
    EXPECT_EQ(shortKernelName("void ns::kernel_name<c<d<e>>, f>(int)", 18), "ns::kernel_name<…>");
    EXPECT_EQ(shortKernelName("a_very_long_namespace::kernel_name", 12), "…kernel_name");
}

TEST(ReportHelpers, TopKernelsByTotalTime) {
    const TraceModel m = syntheticTrace();
    int64_t all = 0, count = 0;
    const auto top = topKernels(m, 1, &count, &all);
    ASSERT_EQ(top.size(), 1u);
    EXPECT_EQ(top[0].name, "volta_sgemm_128x64_nn");
    EXPECT_EQ(top[0].count, 4);
    EXPECT_EQ(top[0].totalNs, 20 * kMs);
    EXPECT_EQ(all, 28 * kMs);
    EXPECT_EQ(count, int64_t(m.kernels.size()));
}

TEST(Reports, RealKinetoTrace) {
    const std::filesystem::path path
        = std::filesystem::path(TUNEUP_SHARED_TRACES) / "param/et_replay/tests/inputs/resnet_kineto.json.gz";
    TUNEUP_REQUIRE_SHARED_TRACES(std::filesystem::path(TUNEUP_SHARED_TRACES));
    std::vector<TraceModel> models;
    models.push_back(importTrace(path.string()));
    const Rendered r = render(std::move(models));
    const size_t steps = r.report.ranks.front().steps.detection.steps.size();
    ASSERT_GT(steps, 0u);
    EXPECT_EQ(count(r.html, "<g class=\"step\">"), steps);
    EXPECT_NE(r.html.find("<code>pageable-memcpy</code>"), std::string::npos);
    EXPECT_NE(r.markdown.find("`pageable-memcpy`"), std::string::npos);
    EXPECT_NE(r.html.find("volta_sgemm"), std::string::npos);
    EXPECT_EQ(count(r.html, "<tr><td class=\"kernel\">"), 15u);
}

TEST(Reports, RecordedSettingsInTextAndJson) {
    std::vector<TraceModel> models;
    models.push_back(syntheticTrace());
    TraceModel& m = models[0];
    FrameworkFlag flag;
    flag.name = m.strings.intern("cudnn.benchmark");
    flag.value = 0;
    m.frameworkFlags.append(flag);
    flag.timeNs = 5;
    flag.value = 1; // the last reading wins
    m.frameworkFlags.append(flag);
    flag.name = m.strings.intern("tf32.cudnn");
    flag.value = -1;
    m.frameworkFlags.append(flag);
    ProgramFact fact;
    fact.name = m.strings.intern("tuneup.dataloader.num_workers");
    fact.value = 4;
    m.programFacts.append(fact);
    const AdviceReport report = advise(models, testRules(), {});
    std::ostringstream text, json;
    writeTextReport(text, report, {});
    writeJsonReport(json, report, {});
    EXPECT_NE(text.str().find("recorded settings: cudnn.benchmark on, tf32.cudnn unknown, dataloader.num_workers 4\n"),
        std::string::npos)
        << text.str();
    rapidjson::Document doc;
    ASSERT_FALSE(doc.Parse(json.str().c_str()).HasParseError());
    const auto& settings = doc["inputs"][0]["recorded_settings"];
    ASSERT_TRUE(settings.IsObject()) << json.str().substr(0, 1500);
    EXPECT_EQ(settings.MemberCount(), 3u);
    EXPECT_STREQ(settings["cudnn.benchmark"].GetString(), "on");
    EXPECT_STREQ(settings["tf32.cudnn"].GetString(), "unknown");
    EXPECT_STREQ(settings["dataloader.num_workers"].GetString(), "4");
}

TEST(Reports, NoRecordedSettingsWithoutProbesOrBootstrap) {
    std::vector<TraceModel> models;
    models.push_back(syntheticTrace());
    const AdviceReport report = advise(models, testRules(), {});
    std::ostringstream text;
    writeTextReport(text, report, {});
    EXPECT_EQ(text.str().find("recorded settings"), std::string::npos) << text.str();
}

TEST(TextReport, RulesNotEvaluatedForOneReasonShareALine) {
    std::vector<TraceModel> models;
    models.push_back(syntheticTrace());
    auto rules = testRules();
    rules.push_back(std::make_unique<AlsoNeedsFlagsRule>());
    const AdviceReport report = advise(models, rules, {});
    std::ostringstream text;
    writeTextReport(text, report, {});
    const std::string out = text.str();
    EXPECT_NE(out.find("    needs-flags-test, also-needs-flags-test: needs torch settings read from the process"),
        std::string::npos)
        << out;
    EXPECT_EQ(count(out, "needs torch settings read from the process"), 1u) << out;
}

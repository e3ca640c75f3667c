// What a reader of the reports sees: a trace without GPU activity is not called "GPU idle" in any
// breakdown (the analysis says so, text, Markdown and HTML show the host's time under "CPU only"), and a
// trace of copies alone still has a GPU.

#include "advise/setting_text.h"
#include "all_rules.h"
#include "model/trace_builder.h"
#include "report/report.h"
#include "report/report_helpers.h"
#include "steps/breakdown.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;

// Four steps of 10 ms on the CPU: a 3 ms wait for the DataLoader each, and a cudaDeviceSynchronize
// call at each step's start (a program that calls CUDA with no GPU work recorded). No kernels, copies
// or sets. With `copies`, a 1 ms copy per step on GPU 0 too.
TraceModel cpuRun(bool copies = false) {
    TraceBuilder b(SourceFormat::KinetoJson, "cpu-only.json");
    const ThreadIndex thread = b.thread(100, 100);
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000 * kMs + s * 10 * kMs;
        Annotation a;
        a.thread = thread;
        a.startNs = t0;
        a.endNs = t0 + 10 * kMs;
        a.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(a);
        a.startNs = t0 + kMs;
        a.endNs = t0 + 4 * kMs;
        a.name = b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        b.addAnnotation(a);
        ApiCall sync;
        sync.thread = thread;
        sync.startNs = t0 - kMs / 2;
        sync.endNs = t0 + kMs / 2;
        sync.name = b.intern("cudaDeviceSynchronize");
        b.addApiCall(sync);
        if (copies) {
            Memcpy c;
            c.startNs = t0 + 5 * kMs;
            c.endNs = t0 + 6 * kMs;
            c.device = 0;
            c.stream = 7;
            c.bytes = 1 << 20;
            c.copyKind = CopyKind::HtoD;
            c.srcKind = MemoryKind::Pinned;
            c.dstKind = MemoryKind::Device;
            b.addMemcpy(c);
        }
    }
    return b.finish();
}

struct Reports {
    std::string text, markdown, html;
};

Reports render(TraceModel model) {
    std::vector<TraceModel> models;
    models.push_back(std::move(model));
    const AdviceReport report = advise(models, rules::builtinRules(), {});
    ReportContext context;
    context.toolVersion = "9.9.9";
    std::ostringstream text, md, html;
    writeTextReport(text, report, context);
    writeMarkdownReport(md, report, context);
    writeHtmlReport(html, report, context);
    return { text.str(), md.str(), html.str() };
}

bool mentionsIdle(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return text.find("idle") != std::string::npos;
}

// The section of `html` between `from` and the next `to`.
std::string section(const std::string& html, std::string_view from, std::string_view to) {
    const size_t start = html.find(from);
    if (start == std::string::npos) return {};
    return html.substr(start, html.find(to, start) - start);
}

} // namespace

TEST(CpuOnlyBreakdown, IsTheHostsTimeWithoutSyncOrGpu) {
    const StepAnalysis steps = analyzeSteps(cpuRun());
    EXPECT_FALSE(steps.gpuActivity());
    EXPECT_EQ(steps.device, -1);
    ASSERT_EQ(steps.perStep.size(), 4u);
    const StepBreakdown& b = steps.median;
    EXPECT_EQ(b.stepNs, 10 * kMs);
    EXPECT_EQ(b.idleDataNs, 3 * kMs);
    // The synchronisation open at each step's start waited for nothing: no GPU work was recorded.
    EXPECT_EQ(b.idleSyncNs, 0);
    EXPECT_EQ(b.idleHostNs, 7 * kMs);
    EXPECT_EQ(&breakdownParts(steps), &kHostBreakdownParts);
}

TEST(CpuOnlyBreakdown, CopiesAloneAreGpuActivity) {
    const StepAnalysis steps = analyzeSteps(cpuRun(true));
    EXPECT_TRUE(steps.gpuActivity());
    EXPECT_EQ(steps.device, 0);
    EXPECT_EQ(steps.median.memcpyNs, kMs);
    EXPECT_EQ(&breakdownParts(steps), &kBreakdownParts);
}

TEST(CpuOnlyBreakdown, ReportsSayCpuOnlyAndNeverIdle) {
    const Reports r = render(cpuRun());
    EXPECT_NE(r.text.find("CPU only (no GPU activity recorded): waiting for data 3 ms (30%), other work 7 ms (70%)"),
        std::string::npos)
        << r.text;
    EXPECT_NE(r.markdown.find("median **10 ms**; CPU only (no GPU activity recorded)"), std::string::npos)
        << r.markdown;
    EXPECT_NE(r.markdown.find("| CPU: waiting for data | 3 ms (30%) |"), std::string::npos) << r.markdown;
    EXPECT_NE(r.markdown.find("| CPU: other work | 7 ms (70%) |"), std::string::npos) << r.markdown;
    const std::string steps = section(r.html, "<section id=\"steps\">", "</section>");
    EXPECT_NE(steps.find("CPU only (no GPU activity recorded)"), std::string::npos) << steps;
    // A bar per step, of host time: waiting for data and the rest.
    EXPECT_EQ(std::count_if(kHostBreakdownParts.begin(), kHostBreakdownParts.end(),
                  [&](const BreakdownPart& p) { return steps.find(std::string(p.label)) != std::string::npos; }),
        2);
    size_t bars = 0;
    for (size_t at = steps.find("<rect class=\"host-data\""); at != std::string::npos;
         at = steps.find("<rect class=\"host-data\"", at + 1))
        ++bars;
    EXPECT_EQ(bars, 4u);
    // The breakdowns never call the host's time GPU idle.
    EXPECT_FALSE(mentionsIdle(r.text.substr(0, r.text.find("\n\n")))) << r.text;
    EXPECT_FALSE(mentionsIdle(section(r.markdown, "## Steps", "## Findings"))) << r.markdown;
    EXPECT_FALSE(mentionsIdle(steps)) << steps;
}

TEST(CpuOnlyBreakdown, AGpuRunKeepsItsIdleParts) {
    const Reports r = render(cpuRun(true));
    EXPECT_EQ(r.text.find("CPU only"), std::string::npos) << r.text;
    EXPECT_NE(r.text.find("GPU 0 per step: compute 0 ns (0%), copies 1 ms (10%)"), std::string::npos) << r.text;
    EXPECT_NE(r.markdown.find("| Idle: waiting for data | 3 ms (30%) |"), std::string::npos) << r.markdown;
    EXPECT_NE(r.html.find("<rect class=\"idle-data\""), std::string::npos);
}

// The recorded settings as a person reads them: versions, the loss scale, the optimizer's options by name.
TEST(RecordedSettings, ReadAsTheirMeaning) {
    EXPECT_EQ(readableSetting("torch.version", "11300").value, "1.13.0");
    EXPECT_EQ(readableSetting("torch.version", "21100").value, "2.11.0");
    const SettingText scale = readableSetting("amp.scale_milli", "65536000");
    EXPECT_EQ(scale.name, "amp.scale");
    EXPECT_EQ(scale.value, "65536");
    EXPECT_EQ(readableSetting("amp.scale_milli", "1500").value, "1.5");
    EXPECT_EQ(readableSetting("amp.scale_milli", "125").value, "0.125");
    EXPECT_EQ(readableSetting("amp.scale_milli", "").name, "amp.scale"); // a side of a comparison without it
    EXPECT_EQ(readableSetting("optimizer.family", "1").value, "torch.optim");
    EXPECT_EQ(readableSetting("optimizer.family", "2").value, "apex");
    EXPECT_EQ(readableSetting("optimizer.family", "0").value, "other");
    EXPECT_EQ(readableSetting("optimizer.fused", "-1").value, "no such option");
    EXPECT_EQ(readableSetting("optimizer.foreach", "0").value, "off");
    EXPECT_EQ(readableSetting("zero_grad.set_to_none", "1").value, "on");
    EXPECT_EQ(readableSetting("amp.skipped", "-1").value, "unknown");
    // Counts and names it does not know keep their value.
    EXPECT_EQ(readableSetting("amp.skipped", "3").value, "3");
    EXPECT_EQ(readableSetting("dataloader.num_workers", "4").value, "4");
    EXPECT_EQ(readableSetting("dataloader.num_workers", "1").value, "1");
    EXPECT_EQ(readableSetting("cudnn.benchmark", "on").value, "on");
    EXPECT_EQ(readableSetting("something.new", "12").name, "something.new");
    EXPECT_EQ(readableSetting("something.new", "12").value, "12");
}

TEST(RecordedSettings, TheTextReportShowsThemReadable) {
    TraceModel model = cpuRun();
    for (const auto& [name, value] : { std::pair<const char*, int64_t> { "tuneup.torch.version", 11300 },
             { "tuneup.amp.scale_milli", 1024000 }, { "tuneup.optimizer.fused", -1 } }) {
        ProgramFact fact;
        fact.name = model.strings.intern(name);
        fact.value = value;
        model.programFacts.append(fact);
    }
    const std::string text = render(std::move(model)).text;
    EXPECT_NE(text.find("torch.version 1.13.0"), std::string::npos) << text;
    EXPECT_NE(text.find("amp.scale 1024"), std::string::npos) << text;
    EXPECT_NE(text.find("optimizer.fused no such option"), std::string::npos) << text;
    EXPECT_EQ(text.find("scale_milli"), std::string::npos) << text;
}

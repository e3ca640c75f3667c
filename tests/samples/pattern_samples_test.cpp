// Every anti-pattern sample in samples/ (LibTorch C++ and Python), recorded for real by `tuneup record`
// on the CPU, broken and --fixed. The file must show the steps, the settings and facts the sample set,
// and the main thread's sampled states; where the anti-pattern's signal exists on the CPU, its rule
// fires on the sample and not on the twin, and on Python samples names the line of the sample behind it.
// Signals only a GPU shows (fill kernels, GEMM shapes, copies, conv algorithms) are checked by
// scripts/gpu-check.sh.

#include "sqlite_query.h"
#include "temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <ostream>
#include <rapidjson/document.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

// A setting in `tuneup advise`'s recorded_settings, as the broken and the fixed run must show it.
struct Setting {
    std::string name, broken, fixed;
};

struct SampleCase {
    std::string name;
    bool python;
    std::string args; // small sizes: the CPU here is slow
    std::vector<Setting> settings; // recorded by the torch probes or the sample's facts
    std::string rule; // fires on the sample and not on --fixed; "" when only a GPU shows it
    // Python: the line of samples/python/<file> (the first that holds `text`) the rule's finding must name.
    std::string sourceFile = {}, sourceText = {};
};

// gtest prints a parameter in a failing test's name: the sample, not its bytes.
void PrintTo(const SampleCase& c, std::ostream* out) {
    *out << (c.python ? "python " : "C++ ") << c.name;
}

using tuneup::test::readFile;

class PatternSampleTest : public ::testing::TestWithParam<SampleCase> {
protected:
    // Records the sample (broken or fixed) and returns its file; the run must succeed.
    std::string record(bool fixed) {
        const SampleCase& c = GetParam();
        std::string db = m_dir + (fixed ? "/fixed.db" : "/broken.db");
        const std::string program = c.python
            ? std::string(TUNEUP_PYTHON) + " " + TUNEUP_SAMPLES_DIR + "/python/" + c.name + ".py"
            : std::string(TUNEUP_SAMPLES_BIN) + "/" + c.name;
        const std::string command = std::string(TUNEUP_BINARY) + " record -o " + db + " -- " + program + " " + c.args
            + (fixed ? " --fixed" : "") + " > " + m_dir + "/out.txt 2>&1";
        const int status = std::system(command.c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << readFile(m_dir + "/out.txt");
        return db;
    }

    // `tuneup advise FILE --format json`, parsed.
    // --all: these tests hold each rule to its pattern; on a CPU a pattern may cost too little to clear the
    // materiality floor (a fill of four small layers), which materiality_test covers.
    rapidjson::Document advise(const std::string& db) {
        const std::string out = db + ".json";
        const std::string command = std::string(TUNEUP_BINARY) + " advise " + db + " --all --format json -o " + out;
        EXPECT_EQ(std::system(command.c_str()), 0) << command;
        rapidjson::Document json;
        json.Parse(readFile(out).c_str());
        EXPECT_FALSE(json.HasParseError()) << out;
        return json;
    }

    static std::string setting(const rapidjson::Document& advice, const std::string& name) {
        const auto& settings = advice["inputs"][0]["recorded_settings"];
        const auto it = settings.FindMember(name.c_str());
        return it == settings.MemberEnd() ? "(not recorded)" : it->value.GetString();
    }
    // Whether a finding of `rule` names `file`:`line` among its sources (not sampled).
    static bool names(const rapidjson::Document& advice, const std::string& rule, const std::string& file, int line) {
        for (const auto& f : advice["findings"].GetArray())
            if (f["rule"].GetString() == rule)
                for (const auto& site : f["sources"].GetArray())
                    if (site["file"].GetString() == file && site["line"].GetInt() == line && !site["sampled"].GetBool())
                        return true;
        return false;
    }
    static int lineOf(const std::string& file, const std::string& text) {
        std::ifstream in(file);
        std::string line;
        for (int number = 1; std::getline(in, line); ++number)
            if (line.find(text) != std::string::npos) return number;
        ADD_FAILURE() << "no line of " << file << " holds " << text;
        return 0;
    }
    static bool raised(const rapidjson::Document& advice, const std::string& rule) {
        for (const auto& f : advice["findings"].GetArray())
            if (f["rule"].GetString() == rule) return true;
        return false;
    }

    // What every run must show: steps, the settings it made, its main thread's states.
    void checkRun(const std::string& db, const rapidjson::Document& advice, bool fixed) {
        const SampleCase& c = GetParam();
        const auto& input = advice["inputs"][0];
        EXPECT_GE(input["steps"]["count"].GetInt(), 3) << db;
        for (const Setting& s : c.settings)
            EXPECT_EQ(setting(advice, s.name), fixed ? s.fixed : s.broken) << s.name << (fixed ? " (--fixed)" : "");
        tuneup::test::SqliteQuery q(db);
        EXPECT_GT(q.scalar("SELECT count(*) FROM thread_states"), 0) << "main thread states sampled";
        EXPECT_EQ(q.scalar("SELECT value FROM stats WHERE name = 'events.dropped'"), 0);
        if (!c.python) { // a LibTorch program: its main thread's native stack is sampled (native_stacks_test)
            const std::string native = q.meta("capture.native_stacks").value_or("");
            EXPECT_TRUE(native.starts_with("on: ") || native.starts_with("off: perf_event_open refused")) << native;
            // A few samples at most (a short run's CPU time, mostly LibTorch's loading): each in the sample itself.
            EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples p JOIN strings m ON m.id = p.module_id WHERE "
                               "m.value NOT LIKE '%/samples/"
                          + c.name + "'"),
                0)
                << db;
            // Named where the build has debug information (native_stacks_test checks the naming itself): mostly
            // in the samples' sources; a template of LibTorch's headers compiled into the program is named where
            // it is defined.
            if (q.scalar("SELECT count(*) FROM native_samples WHERE file_id IS NOT NULL") > 0) {
                EXPECT_GT(q.scalar("SELECT count(*) FROM native_samples p JOIN strings f ON f.id = p.file_id WHERE "
                                   "f.value LIKE '%/samples/cpp/%'"),
                    0)
                    << db;
            }
        }
    }

    tuneup::test::TempDir m_tmp { "tuneup_pattern_sample" };
    std::string m_dir = m_tmp.path();
};

TEST_P(PatternSampleTest, RecordsTheSampleAndItsFixedTwin) {
    const SampleCase& c = GetParam();
    const std::string broken = record(false);
    const std::string fixed = record(true);
    const auto brokenAdvice = advise(broken);
    const auto fixedAdvice = advise(fixed);
    ASSERT_TRUE(brokenAdvice.IsObject() && fixedAdvice.IsObject());
    checkRun(broken, brokenAdvice, false);
    checkRun(fixed, fixedAdvice, true);
    if (!c.rule.empty()) {
        EXPECT_TRUE(raised(brokenAdvice, c.rule)) << c.rule << " must fire on " << c.name;
        EXPECT_FALSE(raised(fixedAdvice, c.rule)) << c.rule << " must not fire on " << c.name << " --fixed";
    }
    if (c.python && !c.sourceFile.empty()) {
        const std::string file = std::string(TUNEUP_SAMPLES_DIR) + "/python/" + c.sourceFile;
        const int line = lineOf(file, c.sourceText);
        EXPECT_TRUE(names(brokenAdvice, c.rule, file, line))
            << c.rule << " must name " << file << ":" << line << " (" << c.sourceText << ")";
    }
}

// The signals a CPU recording holds. DataLoader waits are made long enough to matter on the CPU
// (--load-ms), where computing a step takes far longer than on a GPU.
std::vector<SampleCase> cases(bool python) {
    const Setting benchmark { "cudnn.benchmark", "off", "on" };
    const Setting anomaly { "autograd.anomaly", "on", "off" };
    const Setting setToNone { "zero_grad.set_to_none", "0", "1" };
    const Setting workers { "dataloader.num_workers", "0", "4" };
    std::vector<SampleCase> list = {
        { "cudnn_autotuner", python, "--steps 4 --batch 2", { benchmark }, "" },
        { "zero_grad_fill", python, "--steps 6 --layers 4", { setToNone }, "zero-grad-fill", "sample.py",
            "optimizer.zero_grad(set_to_none=set_to_none)" },
        { "unaligned_linear", python, "--steps 4", {}, "" },
        // Python: a batch of 64, so that a worker's hand-over of a batch (2-4 ms here) stays small beside its step
        // (torch 2.13 computes a step of 32 in 4-6 ms, where 1.13 took 9). C++ (LibTorch 1.13): 32 at 2 ms.
        { "dataloader_workers", python,
            python ? "--steps 12 --batch 64 --load-ms 0.5" : "--steps 12 --batch 32 --load-ms 2", { workers },
            "dataloader-stall", "dataloader_workers.py", "loader = DataLoader(dataset, batch_size=args.batch)" },
        { "anomaly", python, "--steps 4", { anomaly }, "debug-api-enabled", "anomaly.py",
            "torch.autograd.set_detect_anomaly(not args.fixed)" },
        { "pageable_copy", python, "--steps 4 --batch 16", {}, "" },
        { "cpu_tensor_copy", python, "--steps 4", {}, "" },
        // Python: the bootstrap records the model's layers; C++ programs have no such fact.
        { "conv_bias_bn", python, "--steps 4 --batch 2", {}, python ? "conv-bias-before-batchnorm" : "" },
        { "amp", python, "--steps 4 --hidden 128", {}, "" },
    };
    if (python) {
        list.push_back(
            { "data_parallel", true, "--steps 4 --batch 8", { { "wrap.data_parallel", "1", "(not recorded)" } }, "" });
        // The per-parameter kernels exist only on a GPU: on the CPU, the settings the bootstrap read.
        list.push_back({ "unfused_optimizer", true, "--steps 4 --layers 8 --width 32",
            { { "optimizer.foreach", "0", "1" }, { "optimizer.fused", "0", "0" } }, "" });
        // Mixed precision (docs/agent.md, tuneup.amp.*): on the CPU the GradScaler is torch.amp's, or its
        // algorithm on CPU tensors before PyTorch 2.3 (samples/python/cpu_grad_scaler.py).
        list.push_back({ "half_params", true, "--steps 4", { { "optimizer.params_fp16", "2", "0" } },
            "half-without-master-weights", "half_params.py", "model = model.half()" });
        list.push_back({ "clip_before_unscale", true, "--steps 4 --width 64", { { "amp.grad_scaler", "1", "1" } },
            "clip-before-unscale", "clip_before_unscale.py", "torch.nn.utils.clip_grad_norm_(" });
        // GPU memory exists only on a GPU: on the CPU both run the batch given.
        list.push_back({ "memory_headroom", true, "--steps 4 --width 1024", {}, "" });
        // Skips at steps 0 (calibration), 2, 5, 8 and 11 (outlier batches); none --fixed.
        list.push_back({ "amp_loss_scale", true, "--steps 12 --width 64", { { "amp.grad_scaler", "1", "1" } },
            "amp-loss-scale-instability", "amp_loss_scale.py", "scaler.scale(loss).backward()" });
    }
    return list;
}

std::string caseName(const ::testing::TestParamInfo<SampleCase>& info) {
    return (info.param.python ? "python_" : "cpp_") + info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cpp, PatternSampleTest, ::testing::ValuesIn(cases(false)), caseName);
#ifdef TUNEUP_PYTHON
INSTANTIATE_TEST_SUITE_P(Python, PatternSampleTest, ::testing::ValuesIn(cases(true)), caseName);
#endif

} // namespace

// `tuneup advise --format json` on every trace of ../shared/traces (the multi-rank sets as one job each),
// compared with the reports kept in tests/golden/advise/: what users get, held still while the code
// under it moves. The reports are kept in their golden form (golden_json.h): this machine's paths
// replaced by placeholders, the tool's version left out. A failure shows a unified diff; when the change
// is intended, scripts/refresh-golden.sh writes the files anew (TUNEUP_REFRESH_GOLDEN=1 here).

#include "golden_json.h"
#include "run_program.h"
#include "shared_traces.h"
#include "temp_dir.h"
#include "unified_diff.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const fs::path kGoldenDir = TUNEUP_GOLDEN_DIR;

struct Case {
    std::string name; // also the golden file's name
    std::vector<std::string> files; // under ../shared/traces; several are the ranks of one job
};

std::vector<Case> cases() {
    const std::string hta = "hta/tests/data/", tb = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/",
                      param = "param/et_replay/tests/inputs/", lens = "tracelens/tests/traces/",
                      pipit = "pipit/pipit/tests/data/";
    std::vector<std::string> dlrm;
    for (const char* file : { "worker0_step_12.1694128201545", "worker1_step_12.1694128201556",
             "worker2_step_12.1694128201554", "worker3_step_12.1694128201557", "worker4_step_12.1694128201547",
             "worker5_step_12.1694128201549", "worker6_step_12.1694128201553", "worker7_step_12.1694128201553" })
        dlrm.push_back(param + "dlrm_kineto/" + file + ".pt.trace.json");
    return {
        // Kineto JSON (MANIFEST.md A1-A4)
        { "hta_amd_mi250", { hta + "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz" } },
        { "hta_alexnet", { hta + "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz" } },
        { "hta_simple_add", { hta + "critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz" } },
        { "hta_cuda_event_sync", { hta + "critical_path/cuda_event_sync/event_sync_trace.json.gz" } },
        { "hta_cuda_event_sync_multi_stream",
            { hta + "critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz" } },
        { "hta_cupti_profiler", { hta + "cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz" } },
        { "hta_large_integer", { hta + "large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz" } },
        { "hta_nccl_data", { hta + "nccl_parser_config/nccl_data.json.gz" } },
        { "hta_negative_queue_rank0", { hta + "negative_queue_length_values_check/rank0.json.gz" } },
        { "hta_ns_resolution", { hta + "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" } },
        { "hta_rank_non_gpu", { hta + "rank_non_gpu/rank_non_gpu.json.gz" } },
        { "hta_trace_diff_control", { hta + "trace_diff/control/control.json.gz" } },
        { "hta_trace_diff_test", { hta + "trace_diff/test/test.json.gz" } },
        { "hta_trace_filter_2_ranks",
            { hta + "trace_filter/sampled_rank-0.json.gz", hta + "trace_filter/sampled_rank-1.json.gz" } },
        { "hta_triton_example", { hta + "triton_example/triton_example.json.gz" } },
        { "hta_gpu_user_annotation", { hta + "with_gpu_user_annotation/step_based_trace_2543932.json.gz" } },
        { "param_resnet", { param + "resnet_kineto.json.gz" } },
        { "param_dlrm_8_ranks", dlrm },
        { "tracelens_b200_eager", { lens + "b200/eager_trace.json.gz" } },
        { "tracelens_h100_bert_small", { lens + "h100/gaunernst_bert-small-uncased__1016001.json.gz" } },
        { "tracelens_h100_vit", { lens + "h100/Falconsai_nsfw_image_detection__1016002.json.gz" } },
        { "tracelens_h100_qwen", { lens + "h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz" } },
        { "tracelens_h100_timesformer", { lens + "h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz" } },
        { "tbplugin_bert_fp16_ddp_2_ranks",
            { tb + "bert_newAPI_fp16_ddp_4dataloader/worker0_round1.pt.trace.json.gz",
                tb + "bert_newAPI_fp16_ddp_4dataloader/worker1_round1.pt.trace.json.gz" } },
        { "tbplugin_resnet50_ddp_2_ranks",
            { tb + "resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
                tb + "resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz" } },
        // Nsight Systems SQLite exports (MANIFEST.md B)
        { "nsys_nvfuser_report1", { "nvfuser/ee4fcf30/report1.sqlite" } },
        { "nsys_nvfuser_report2", { "nvfuser/df8f397e/report2.sqlite" } },
        { "nsys_cloverleaf", { pipit + "cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite" } },
        { "nsys_saxpy_mpi", { pipit + "saxpy-mpi-cuda_nsys_perlmutter0.sqlite" } },
        { "nsys_dynamicvit_no_cuda", { "dynamicvit/nsys_profile.sqlite" } },
    };
}

void PrintTo(const Case& c, std::ostream* out) {
    *out << c.name;
}

bool refreshing() {
    const char* refresh = std::getenv("TUNEUP_REFRESH_GOLDEN");
    return refresh && std::string(refresh) == "1";
}

tuneup::golden::Normalisation normalisation() {
    tuneup::golden::Normalisation n;
    n.dropMembers = { "tool.version" };
    // The longer paths first: the traces may lie inside the source folder.
    std::vector<std::pair<std::string, std::string>> paths;
    for (const fs::path& traces : { kTraces, fs::weakly_canonical(kTraces) })
        paths.emplace_back(traces.string() + "/", "<traces>/");
    for (const fs::path& source : { fs::path(TUNEUP_SOURCE_DIR), fs::weakly_canonical(TUNEUP_SOURCE_DIR) })
        paths.emplace_back(source.string() + "/", "<source>/");
    std::stable_sort(
        paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    n.replacements = paths;
    return n;
}

// What users get from `tuneup advise --format json FILES`, in its golden form. A refused input has no
// report: its exit code and message stand in for it.
std::string adviseGolden(const Case& c) {
    std::vector<std::string> args { "advise", "--format", "json" };
    for (const std::string& file : c.files)
        args.push_back((kTraces / file).string());
    const tuneup::test::ProgramResult r = tuneup::test::runProgram(TUNEUP_BINARY, args);
    if (r.code == 0) return tuneup::golden::goldenForm(r.out, normalisation());
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("exit_code");
    w.Int(r.code);
    w.Key("stdout");
    w.String(r.out.c_str());
    w.Key("stderr");
    w.String(r.err.c_str());
    w.EndObject();
    return tuneup::golden::goldenForm(buffer.GetString(), normalisation());
}

class AdviseGolden : public ::testing::TestWithParam<Case> { };

TEST_P(AdviseGolden, MatchesTheGoldenReport) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const Case& c = GetParam();
    const fs::path golden = kGoldenDir / (c.name + ".json");
    const std::string now = adviseGolden(c);
    const std::string kept = tuneup::test::readFile(golden.string());
    if (refreshing()) {
        if (now != kept) {
            std::ofstream(golden, std::ios::binary) << now;
            std::cout << "refreshed " << golden.string() << "\n";
        }
        return;
    }
    ASSERT_FALSE(kept.empty()) << golden << " is missing: run scripts/refresh-golden.sh to write it";
    EXPECT_TRUE(now == kept) << "tuneup advise --format json on " << c.name << " differs from " << golden.string()
                             << " (- kept, + now). If the change is intended, run scripts/refresh-golden.sh "
                                "<build dir> and review the diff of tests/golden/ before committing.\n"
                             << tuneup::golden::unifiedDiff(kept, now, "golden/" + c.name + ".json", "now");
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
    return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, AdviseGolden, ::testing::ValuesIn(cases()), caseName);

// Every golden file belongs to a case: one left behind by a renamed case would never be compared.
TEST(AdviseGoldenFiles, EachBelongsToACase) {
    std::set<std::string> names;
    for (const Case& c : cases())
        names.insert(c.name + ".json");
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
        const std::string file = entry.path().filename().string();
        if (names.count(file)) continue;
        if (refreshing()) {
            fs::remove(entry.path());
            std::cout << "removed " << entry.path().string() << " (no such case)\n";
        } else {
            ADD_FAILURE() << entry.path() << " belongs to no case of advise_golden_test.cpp: remove it";
        }
    }
}

} // namespace

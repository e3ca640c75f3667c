// debug-api-enabled: debugging APIs left on in a training run: autograd anomaly detection, the
// profiler, emit_nvtx, gradcheck. See debug-api-enabled.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr std::string_view kEvaluateFunction = "autograd::engine::evaluate_function: ";
// Anomaly mode checks the outputs of (nearly) every backward node; a custom backward that happens to
// call isnan does not make a quarter of the nodes do it.
constexpr size_t kMinNanChecks = 3;
constexpr double kMinCheckedNodeShare = 0.25;
constexpr size_t kMinNvtxRanges = 10;
// With anomaly mode on, every autograd node created in forward captures the Python stack.
constexpr size_t kMinStackCaptures = 10;
// emit_nvtx: the record_function callback and the range's name (with sizes, when recorded) per op.
constexpr int64_t kNvtxRangeCostNs = 1'000;
// The Python bootstrap's names for the gradient checks it watches (python_calls).
constexpr std::array<std::string_view, 2> kGradcheckCalls
    = { "torch.autograd.gradcheck", "torch.autograd.gradgradcheck" };

bool isOneOf(std::string_view name, const std::array<std::string_view, 2>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// The NaN checks anomaly mode adds to the autograd engine: after each node, for each output,
// isnan(output)._is_any_true().item() (older versions: isnan(output).any().item()), which syncs with the GPU.
bool isCheckOp(std::string_view name) {
    return name == "aten::isnan" || name == "aten::_is_any_true" || name == "aten::any" || name == "aten::item"
        || name == "aten::_local_scalar_dense";
}

struct NanChecks {
    size_t checks = 0; // aten::isnan calls made by the autograd engine
    size_t nodes = 0; // backward nodes the engine ran
    int64_t checkNs = 0; // host time of the checks (isnan .. item), the GPU sync included
    std::vector<EventRef> events;
};

NanChecks anomalyNanChecks(const TraceModel& m) {
    NanChecks r;
    const auto& ops = m.cpuOps;
    // Traces before PyTorch 1.10 have no evaluate_function ranges: backward nodes ("MulBackward0")
    // are top-level ops on the autograd thread, and the checks follow them at the top level.
    std::unordered_map<ThreadIndex, RowIndex> lastTopLevel;
    size_t evaluateRanges = 0, legacyNodes = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
        const std::string_view name = m.str(ops.name[i]);
        if (name.starts_with(kEvaluateFunction)) ++evaluateRanges;
        const bool topLevel = ops.parent[i] == kNoRow;
        if (topLevel && contains(name, "Backward")) ++legacyNodes;
        if (name == "aten::isnan") {
            bool inEngine = false;
            RowIndex p = ops.parent[i];
            for (int hops = 0; p != kNoRow && hops < 8 && !inEngine; ++hops, p = ops.parent[size_t(p)])
                inEngine = m.str(ops.name[size_t(p)]).starts_with(kEvaluateFunction);
            if (!inEngine && topLevel) {
                auto it = lastTopLevel.find(ops.thread[i]);
                inEngine = it != lastTopLevel.end() && contains(m.str(ops.name[size_t(it->second)]), "Backward");
            }
            if (inEngine) {
                ++r.checks;
                // The check's span: isnan and the ops that follow it at the same level (any, item).
                int64_t end = ops.endNs[i];
                for (size_t j = i + 1; j < ops.size() && j < i + 64; ++j) {
                    if (ops.thread[j] != ops.thread[i] || ops.depth[j] > ops.depth[i]) continue;
                    if (ops.parent[j] != ops.parent[i] || !isCheckOp(m.str(ops.name[j]))) break;
                    end = std::max(end, ops.endNs[j]);
                }
                r.checkNs += end - ops.startNs[i];
                if (r.events.size() < 50) r.events.push_back({ EventTable::CpuOp, RowIndex(i) });
            }
        }
        // A check op does not replace the node it checks as "the last top-level op".
        if (topLevel && !isCheckOp(name)) lastTopLevel[ops.thread[i]] = RowIndex(i);
    }
    r.nodes = evaluateRanges ? evaluateRanges : legacyNodes;
    return r;
}

// emit_nvtx names each op's range "aten::mm, seq = 12, op_id = 5, sizes = [[2, 3], [3, 4]]".
bool isEmitNvtxRange(std::string_view name) {
    const size_t comma = name.find(", ");
    if (comma == std::string_view::npos || comma == 0) return false;
    const std::string_view op = name.substr(0, comma), rest = name.substr(comma + 2);
    return contains(op, "::")
        && (rest.starts_with("seq = ") || rest.starts_with("op_id = ") || rest.starts_with("sizes = "));
}

// Total length of spans after merging (nested gradgradcheck -> gradcheck counts once).
int64_t mergedNs(std::vector<TimeSpan> spans) {
    int64_t total = 0;
    for (const TimeSpan& s : mergeSpans(std::move(spans)))
        total += s.durationNs();
    return total;
}

Severity severityFor(double share, Severity floor) {
    const Severity s = share >= 0.2 ? Severity::Error : share >= 0.01 ? Severity::Warning : Severity::Info;
    return std::max(s, floor);
}

class DebugApiEnabled final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "debug-api-enabled", "Debugging APIs left on",
            "Autograd anomaly detection, the profiler, emit_nvtx or gradcheck run inside the training loop.", {}, false,
            "any of: torch settings (tuneup record), CPU operators, NVTX ranges, Python stacks" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const bool flags = !m.frameworkFlags.empty();
        if (!flags && m.cpuOps.empty() && m.annotations.empty() && m.pythonFunctions.empty()) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::TorchFlags)) + ", or "
                + std::string(inputName(Input::CpuOps)) + ", NVTX ranges or Python stacks";
            return;
        }
        std::vector<std::string> checked;

        // 1. Anomaly detection: the flag, the engine's NaN checks, Python frames.
        const FlagSummary anomalyFlag = frameworkFlag(m, "autograd.anomaly");
        const NanChecks nan = anomalyNanChecks(m);
        const bool nanChecksOn = nan.checks >= kMinNanChecks && nan.nodes > 0
            && double(nan.checks) >= kMinCheckedNodeShare * double(nan.nodes);
        size_t anomalyFrames = 0, stackCaptures = 0, gradcheckFrames = 0;
        std::vector<TimeSpan> gradcheckSpans;
        for (size_t i = 0; i < m.pythonFunctions.size(); ++i) {
            const std::string_view name = m.str(m.pythonFunctions.name[i]);
            if (contains(name, "torch/autograd/anomaly_mode.py"))
                ++anomalyFrames;
            else if (contains(name, "traceback.py") && name.ends_with(": format_stack"))
                ++stackCaptures;
            else if ((contains(name, "torch/autograd/gradcheck.py")
                         && (name.ends_with(": gradcheck") || name.ends_with(": gradgradcheck")))
                || isOneOf(m.str(m.pythonFunctions.call[i]), kGradcheckCalls)) { // the bootstrap's watched calls
                ++gradcheckFrames;
                gradcheckSpans.push_back({ m.pythonFunctions.startNs[i], m.pythonFunctions.endNs[i] });
            }
        }
        // anomaly_mode.py alone may be set_detect_anomaly(False); the per-node stack captures show it on.
        const bool pythonAnomaly = anomalyFrames > 0 && stackCaptures >= kMinStackCaptures;
        if (anomalyFlag.everOn || nanChecksOn || pythonAnomaly)
            outcome.findings.push_back(
                anomalyFinding(context, anomalyFlag, nan, nanChecksOn, anomalyFrames, stackCaptures));
        else {
            if (nan.nodes)
                checked.push_back(std::to_string(nan.nodes) + " backward nodes without anomaly-mode NaN checks");
            if (anomalyFlag.everOff) checked.push_back("autograd.anomaly off");
        }

        // 2. The profiler, from the settings only: a Kineto trace exists because the profiler ran to write it.
        const FlagSummary profiler = frameworkFlag(m, "profiler.enabled");
        if (profiler.everOn && m.info.format != SourceFormat::KinetoJson) {
            Finding f;
            f.kind = FindingKind::Correctness; // a debug API left on: advice whatever it costs
            f.severity = Severity::Warning;
            f.title = "the PyTorch profiler is enabled in the training process (profiler.enabled read "
                + std::to_string(profiler.observations) + " times)";
            f.detail = "The torch probe read the autograd profiler as enabled while tuneup recorded: the script runs "
                       "torch.profiler / torch.autograd.profiler around its training loop. Every operator then goes "
                       "through the profiler's callbacks and, with record_shapes, with_stack or profile_memory, "
                       "records much more; the cost is not measured here (tuneup bench can).";
            f.evidence.facts = { { "profiler.enabled", "on" }, { "reads", std::to_string(profiler.observations) } };
            f.sourceCalls = { "torch.profiler.profile", "torch.autograd.profiler.profile" };
            f.fixPython = "# profile a few steps only, then let training run without the profiler:\n"
                          "from torch.profiler import profile, schedule\n"
                          "with profile(schedule=schedule(wait=5, warmup=2, active=3, repeat=1)) as prof:\n"
                          "    for step, batch in enumerate(loader):\n"
                          "        train_step(batch)\n"
                          "        prof.step()\n"
                          "        if step >= 10:\n"
                          "            break\n"
                          "# ... then the real training loop, outside any profile() block";
            f.fixCpp = "// Remove the profiler from the training loop, or limit it to a few steps:\n"
                       "// torch::autograd::profiler::RecordProfile / enableProfiler(...) only around a short window,\n"
                       "// then disableProfiler() before the long run.";
            outcome.findings.push_back(std::move(f));
        } else if (profiler.everOff) {
            checked.push_back("profiler.enabled off");
        }

        // 3. emit_nvtx: NVTX ranges named after every op.
        size_t nvtxRanges = 0;
        Evidence nvtxEvidence;
        for (size_t i = 0; i < m.annotations.size(); ++i) {
            if (!isEmitNvtxRange(m.str(m.annotations.name[i]))) continue;
            ++nvtxRanges;
            if (nvtxEvidence.events.size() < 50) nvtxEvidence.events.push_back({ EventTable::Annotation, RowIndex(i) });
        }
        if (nvtxRanges >= kMinNvtxRanges) {
            const int64_t perStep = int64_t(context.perStep(int64_t(nvtxRanges)));
            Finding f;
            f.kind = FindingKind::Correctness;
            f.gain = context.gain(perStep * kNvtxRangeCostNs,
                "about 1 us of host time per range (the record_function callback and the range's name); the ranges' "
                "cost is not measured directly",
                "low");
            f.severity = severityFor(f.gain->stepShare, Severity::Info);
            f.title = "torch.autograd.profiler.emit_nvtx is on: " + std::to_string(perStep)
                + " NVTX ranges per step, one per operator";
            f.detail
                = "NVTX ranges named like \"aten::mm, seq = 12, sizes = [...]\" are what emit_nvtx emits for every "
                  "operator. It is meant for one Nsight Systems session; left in the training script it adds a "
                  "callback and a formatted name to every operator.";
            nvtxEvidence.facts
                = { { "emit_nvtx ranges", std::to_string(nvtxRanges) }, { "per step", std::to_string(perStep) },
                      { "example", std::string(m.str(m.annotations.name[size_t(nvtxEvidence.events.front().row)])) } };
            nvtxEvidence.eventsTotal = nvtxRanges;
            f.evidence = std::move(nvtxEvidence);
            f.sourceCalls = { "torch.autograd.profiler.emit_nvtx" };
            f.fixPython = "# remove the emit_nvtx block, or enable it only when profiling:\n"
                          "import contextlib, os, torch\n"
                          "nvtx = torch.autograd.profiler.emit_nvtx() if os.environ.get(\"EMIT_NVTX\") else "
                          "contextlib.nullcontext()\n"
                          "with nvtx:\n"
                          "    train()";
            f.fixCpp = "// Do not wrap the training loop in an NVTX-emitting profiler session\n"
                       "// (torch::autograd::profiler with ProfilerState::NVTX) outside profiling runs.";
            outcome.findings.push_back(std::move(f));
        } else if (!m.annotations.empty()) {
            checked.push_back(std::to_string(m.annotations.size()) + " ranges, no emit_nvtx ranges");
        }

        // 4. gradcheck / gradgradcheck in the run (Python stacks only).
        if (gradcheckFrames > 0) {
            const int64_t total = mergedNs(gradcheckSpans);
            Finding f;
            f.kind = FindingKind::Correctness;
            f.gain = context.gain(context.perStep(total),
                "the time spent inside gradcheck/gradgradcheck calls, all of which a training run can drop", "high");
            f.severity = severityFor(f.gain->stepShare, Severity::Info);
            f.title = "torch.autograd.gradcheck runs inside the training run: " + std::to_string(gradcheckFrames)
                + " calls, " + formatDuration(context.perStep(total)) + " per step";
            f.detail = "Python stacks show calls of torch/autograd/gradcheck.py (gradcheck or gradgradcheck), which "
                       "compare analytical gradients with finite differences: many extra forward passes, usually in "
                       "double precision. They belong in unit tests.";
            f.evidence.facts = { { "gradcheck calls", std::to_string(gradcheckFrames) },
                { "time in gradcheck", formatDuration(total) } };
            f.evidence.spans = mergeSpans(std::move(gradcheckSpans));
            if (f.evidence.spans.size() > 50) f.evidence.spans.resize(50);
            f.sourceCalls.assign(kGradcheckCalls.begin(), kGradcheckCalls.end());
            f.fixPython = "# move gradient checks to a unit test (pytest), out of the training script:\n"
                          "def test_my_function_gradients():\n"
                          "    x = torch.randn(4, 8, dtype=torch.double, requires_grad=True)\n"
                          "    assert torch.autograd.gradcheck(my_function, (x,))";
            f.fixCpp = "// Check gradients in a test binary, not in the training loop.";
            outcome.findings.push_back(std::move(f));
        } else if (!m.pythonFunctions.empty()) {
            checked.push_back(std::to_string(m.pythonFunctions.size()) + " Python frames, no gradcheck");
        }

        if (!outcome.findings.empty()) return;
        if (!flags) checked.push_back("torch settings not recorded (profiler and anomaly flags not read)");
        if (m.pythonFunctions.empty()) checked.push_back("no Python stacks (gradcheck not visible)");
        std::string reason;
        for (const auto& c : checked)
            reason += (reason.empty() ? "" : "; ") + c;
        outcome.reason = reason;
    }

private:
    static Finding anomalyFinding(const RuleContext& context, const FlagSummary& flag, const NanChecks& nan,
        bool nanChecksOn, size_t anomalyFrames, size_t stackCaptures) {
        Finding f;
        f.kind = FindingKind::Correctness;
        f.sourceCalls = { "torch.autograd.set_detect_anomaly", "torch.autograd.detect_anomaly" };
        std::string how;
        if (flag.everOn) how = "the torch probe read torch.is_anomaly_enabled() as on";
        if (nanChecksOn)
            how += (how.empty() ? "" : "; ") + std::string("the autograd engine ran ") + std::to_string(nan.checks)
                + " isnan/any/item checks for " + std::to_string(nan.nodes) + " backward nodes";
        if (anomalyFrames && stackCaptures >= kMinStackCaptures)
            how += (how.empty() ? "" : "; ") + std::string("Python stacks show torch/autograd/anomaly_mode.py and ")
                + std::to_string(stackCaptures) + " stack captures (one per autograd node)";
        f.detail = "Anomaly detection (torch.autograd.set_detect_anomaly(True) or detect_anomaly()) is on: " + how
            + ". It records the Python stack of every autograd node in forward and, in backward, checks each node's "
              "outputs for NaN with a GPU-to-host read, so the host waits for the GPU once per node.";
        if (nanChecksOn) {
            const int64_t perStep = context.perStep(nan.checkNs);
            f.gain = context.gain(perStep,
                "the host time of the NaN checks (isnan, any, item: each waits for the GPU) per step; the stack "
                "captures in forward are not counted",
                "medium");
            f.severity = severityFor(f.gain->stepShare, Severity::Warning);
            f.title = "autograd anomaly detection is on: " + std::to_string(context.perStep(int64_t(nan.checks)))
                + " NaN checks per step in backward, each a GPU sync, cost " + formatDuration(perStep) + " per step";
            f.evidence.events = nan.events;
            f.evidence.eventsTotal = nan.checks;
            f.evidence.facts = { { "NaN checks (aten::isnan in the autograd engine)", std::to_string(nan.checks) },
                { "backward nodes", std::to_string(nan.nodes) },
                { "time in the checks", formatDuration(nan.checkNs) } };
        } else {
            f.severity = Severity::Warning;
            f.title = "autograd anomaly detection is on in the training run";
            f.detail += " The cost is not measured here (tuneup bench can switch it off and compare).";
        }
        if (flag.everOn)
            f.evidence.facts.push_back(
                { "autograd.anomaly", "on (read " + std::to_string(flag.observations) + " times)" });
        if (anomalyFrames)
            f.evidence.facts.push_back({ "anomaly_mode.py frames / stack captures",
                std::to_string(anomalyFrames) + " / " + std::to_string(stackCaptures) });
        f.fixPython = "import torch\n"
                      "torch.autograd.set_detect_anomaly(False)  # the default; remove set_detect_anomaly(True)\n"
                      "# and any `with torch.autograd.detect_anomaly():` around the training step.\n"
                      "# To hunt a NaN, enable it for the failing step only:\n"
                      "# with torch.autograd.detect_anomaly():\n"
                      "#     loss.backward()";
        f.fixCpp
            = "#include <ATen/core/grad_mode.h>\n"
              "#include <torch/csrc/autograd/anomaly_mode.h>\n"
              "torch::autograd::AnomalyMode::set_enabled(false);  // remove set_enabled(true) from the training run";
        return f;
    }
};

} // namespace

std::unique_ptr<Rule> makeDebugApiEnabled() {
    return std::make_unique<DebugApiEnabled>();
}

} // namespace tuneup::rules

// cpu-tensor-then-copy: tensors created on the CPU (torch.zeros, randn, arange, tensor...) and copied to
// the GPU right away, step after step, instead of being created on the GPU. See cpu-tensor-then-copy.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr int64_t kAfterDataLoaderNs = 1'000'000; // a tensor made right after __next__ is the batch's
constexpr int64_t kLiftFreshWindowNs = 20'000; // torch.tensor's aten::lift_fresh follows its aten::to at once

bool isFactory(std::string_view n) {
    static constexpr std::string_view kNames[] = { "aten::randn", "aten::rand", "aten::randint", "aten::randperm",
        "aten::normal", "aten::zeros", "aten::ones", "aten::empty", "aten::full", "aten::arange", "aten::linspace",
        "aten::logspace", "aten::eye", "aten::scalar_tensor", "aten::lift_fresh", "aten::empty_strided" };
    return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

bool isCopy(std::string_view n) {
    return n == "aten::to" || n == "aten::_to_copy" || n == "aten::copy_";
}

// The Python call behind a factory op: "torch.randn"; "torch.tensor" for torch.tensor(data, device=...),
// which the profiler records as aten::empty, aten::to, aten::lift_fresh.
std::string pythonName(std::string_view op, bool liftFresh) {
    if (liftFresh || op == "aten::lift_fresh") return "torch.tensor";
    if (op == "aten::empty_strided") return "torch.empty";
    return "torch." + std::string(op.substr(6));
}

// How to write it on the device.
std::string pythonCall(const std::string& call) {
    if (call == "torch.arange") return "torch.arange(n, device=device)";
    if (call == "torch.full") return "torch.full(shape, value, device=device)";
    if (call == "torch.randint") return "torch.randint(high, shape, device=device)";
    if (call == "torch.randperm" || call == "torch.eye") return call + "(n, device=device)";
    if (call == "torch.linspace" || call == "torch.logspace") return call + "(start, end, steps, device=device)";
    if (call == "torch.normal") return "torch.normal(mean, std, shape, device=device)";
    if (call == "torch.scalar_tensor") return "torch.scalar_tensor(value, device=device)";
    return call + "(shape, device=device)";
}

std::string cppCall(const std::string& call) {
    const std::string name = call.substr(6);
    const std::string options = "torch::TensorOptions().device(torch::kCUDA)";
    if (name == "arange" || name == "randperm" || name == "eye") return "torch::" + name + "(n, " + options + ")";
    if (name == "full") return "torch::full(shape, value, " + options + ")";
    if (name == "randint") return "torch::randint(high, shape, " + options + ")";
    return "torch::" + name + "(shape, " + options + ")";
}

struct Match {
    RowIndex factory = kNoRow, copy = kNoRow, memcpy = kNoRow;
    std::string call; // "torch.randn"
    int64_t idleNs = 0; // GPU idle while the host made and copied the tensor
};

class CpuTensorThenCopy final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "cpu-tensor-then-copy", "Tensors created on the CPU, then copied",
            "Tensors are created on the CPU and copied to the GPU every step instead of being created on the GPU.",
            { Input::CpuOps, Input::Memcpys } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        const auto& ops = m.cpuOps;

        // Which ops launched GPU work (in them or nested ops), and which did a host-to-device copy.
        std::vector<char> launches(ops.size(), 0);
        std::vector<RowIndex> hostToDevice(ops.size(), kNoRow);
        auto markUp = [&](RowIndex op, auto&& f) {
            for (int hops = 0; op != kNoRow && hops < 64; ++hops, op = ops.parent[size_t(op)])
                f(size_t(op));
        };
        for (size_t i = 0; i < m.kernels.size(); ++i)
            markUp(m.kernels.cpuOp[i], [&](size_t op) { launches[op] = 1; });
        for (size_t i = 0; i < m.memsets.size(); ++i)
            markUp(m.memsets.cpuOp[i], [&](size_t op) { launches[op] = 1; });
        for (size_t i = 0; i < m.memcpys.size(); ++i) {
            const bool h2d = m.memcpys.copyKind[i] == CopyKind::HtoD;
            markUp(m.memcpys.cpuOp[i], [&](size_t op) {
                launches[op] = 1;
                if (h2d && hostToDevice[op] == kNoRow) hostToDevice[op] = RowIndex(i);
            });
        }

        std::vector<std::vector<RowIndex>> byThread(m.threads.size());
        std::vector<uint32_t> position(ops.size(), 0);
        for (size_t i = 0; i < ops.size(); ++i) {
            if (ops.thread[i] >= byThread.size()) continue;
            position[i] = uint32_t(byThread[ops.thread[i]].size());
            byThread[ops.thread[i]].push_back(RowIndex(i));
        }
        const std::vector<TimeSpan> loader = dataLoaderWaits(m);
        auto nearLoader = [&loader](int64_t t) {
            auto it = std::upper_bound(
                loader.begin(), loader.end(), t, [](int64_t v, const TimeSpan& s) { return v < s.startNs; });
            return it != loader.begin() && t < (it - 1)->endNs + kAfterDataLoaderNs;
        };

        // GPU busy time on the step's device, to weigh how long the GPU waited.
        std::vector<TimeSpan> busy;
        busy.reserve(m.kernels.size() + m.memcpys.size() + m.memsets.size());
        const int32_t device = context.steps().device;
        for (size_t i = 0; i < m.kernels.size(); ++i)
            if (device < 0 || m.kernels.device[i] == device)
                busy.push_back({ m.kernels.startNs[i], m.kernels.endNs[i] });
        for (size_t i = 0; i < m.memcpys.size(); ++i)
            if (device < 0 || m.memcpys.device[i] == device)
                busy.push_back({ m.memcpys.startNs[i], m.memcpys.endNs[i] });
        for (size_t i = 0; i < m.memsets.size(); ++i)
            if (device < 0 || m.memsets.device[i] == device)
                busy.push_back({ m.memsets.startNs[i], m.memsets.endNs[i] });
        busy = mergeSpans(std::move(busy));

        std::vector<Match> matches;
        size_t loaderSkipped = 0, factories = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
            if (!isFactory(m.str(ops.name[i])) || ops.thread[i] >= byThread.size() || launches[i]) continue;
            const RowIndex parent = ops.parent[i];
            if (parent != kNoRow && m.str(ops.name[size_t(parent)]).substr(0, 6) == "aten::")
                continue; // made inside another op (the destination of a copy, a clone): not the user's tensor
            ++factories;
            const auto& list = byThread[ops.thread[i]];
            RowIndex next = kNoRow;
            for (size_t p = position[i] + 1; p < list.size(); ++p) {
                const size_t j = size_t(list[p]);
                if (ops.depth[j] > ops.depth[i]) continue;
                if (ops.parent[j] == parent && ops.startNs[j] >= ops.endNs[i]) next = list[p];
                break;
            }
            if (next == kNoRow || !isCopy(m.str(ops.name[size_t(next)])) || hostToDevice[size_t(next)] == kNoRow)
                continue;
            // An uninitialised tensor followed by copy_ is the copy's destination (on either device), not its source.
            const std::string_view factoryName = m.str(ops.name[i]);
            if ((factoryName == "aten::empty" || factoryName == "aten::empty_strided")
                && m.str(ops.name[size_t(next)]) == "aten::copy_")
                continue;
            if (nearLoader(ops.startNs[i])) {
                ++loaderSkipped;
                continue;
            }
            // torch.tensor(data, device=...) shows as aten::empty, aten::to, aten::lift_fresh (which may start
            // within the to's last microsecond, so look by time rather than by nesting).
            bool liftFresh = false;
            const int64_t copyEnd = ops.endNs[size_t(next)];
            for (size_t p = position[size_t(next)] + 1; p < list.size() && !liftFresh; ++p) {
                const size_t j = size_t(list[p]);
                if (ops.startNs[j] > copyEnd + kLiftFreshWindowNs) break;
                liftFresh = m.str(ops.name[j]) == "aten::lift_fresh";
            }
            Match match { RowIndex(i), next, hostToDevice[size_t(next)], pythonName(factoryName, liftFresh), 0 };
            const int64_t a = ops.startNs[i], b = ops.endNs[size_t(next)];
            match.idleNs = (b - a) - coveredNs(busy, a, b);
            matches.push_back(match);
        }

        if (matches.empty()) {
            outcome.reason = std::to_string(factories)
                + " tensor factory calls (zeros, randn, arange...) outside other ops; "
                  "none on the CPU followed by a copy to the GPU";
            if (loaderSkipped)
                outcome.reason
                    += " outside DataLoader batches (" + std::to_string(loaderSkipped) + " there, not counted)";
            return;
        }

        // Repeated each step?
        const auto& steps = context.steps().detection.steps;
        size_t stepsWith = 0;
        for (const Step& s : steps) {
            for (const Match& mt : matches)
                if (ops.startNs[size_t(mt.factory)] >= s.startNs && ops.startNs[size_t(mt.factory)] < s.endNs) {
                    ++stepsWith;
                    break;
                }
        }
        if (steps.empty() ? matches.size() < 2 : stepsWith * 2 < steps.size()) {
            outcome.reason = std::to_string(matches.size())
                + " CPU-created tensors copied to the GPU, but not every "
                  "step ("
                + std::to_string(stepsWith) + " of " + std::to_string(steps.size())
                + " steps): set-up, not a per-step cost";
            return;
        }

        int64_t idleNs = 0, copyNs = 0, hostNs = 0;
        std::map<std::string, size_t> byFactory;
        Evidence e;
        for (const Match& mt : matches) {
            idleNs += mt.idleNs;
            copyNs += m.memcpys.endNs[size_t(mt.memcpy)] - m.memcpys.startNs[size_t(mt.memcpy)];
            hostNs += ops.endNs[size_t(mt.copy)] - ops.startNs[size_t(mt.factory)];
            ++byFactory[mt.call];
            if (e.events.size() + 3 <= 51) {
                e.events.push_back({ EventTable::CpuOp, mt.factory });
                e.events.push_back({ EventTable::CpuOp, mt.copy });
                e.events.push_back({ EventTable::Memcpy, mt.memcpy });
            }
            if (e.spans.size() < 10) e.spans.push_back({ ops.startNs[size_t(mt.factory)], ops.endNs[size_t(mt.copy)] });
        }
        e.eventsTotal = matches.size() * 3;
        const size_t stepCount = std::max<size_t>(steps.size(), 1);
        std::string kinds, mostCommon;
        size_t most = 0;
        for (const auto& [name, n] : byFactory) {
            kinds += (kinds.empty() ? "" : ", ") + name + " x" + std::to_string(n);
            if (n > most) {
                most = n;
                mostCommon = name;
            }
        }
        // "4 per step", or "2 in 1 of 2 steps" when some steps have none (a truncated last step).
        const std::string howOften = stepsWith == steps.size() || steps.empty()
            ? std::to_string(matches.size() / stepCount) + " per step"
            : std::to_string(matches.size()) + " in " + std::to_string(stepsWith) + " of "
                + std::to_string(steps.size()) + " steps";
        e.facts = { { "CPU-created tensors copied to the GPU", howOften }, { "factories", kinds },
            { "host time creating and copying", formatDuration(context.perStep(hostNs)) + " per step" },
            { "host-to-device copy time", formatDuration(context.perStep(copyNs)) + " per step" },
            { "GPU idle meanwhile", formatDuration(context.perStep(idleNs)) + " per step" } };
        if (loaderSkipped) e.facts.emplace_back("not counted (DataLoader batches)", std::to_string(loaderSkipped));

        Finding f;
        f.gain = context.gain(context.perStep(idleNs),
            "created on the GPU, the tensor costs one kernel launch; the GPU no longer waits while the host fills it "
            "and copies it (a blocking copy from pageable memory): the GPU idle time during those host calls",
            "medium");
        f.severity = f.gain->stepShare >= 0.015 ? Severity::Warning : Severity::Info;
        f.title = "tensors created on the CPU and copied to the GPU, " + howOften + " (" + kinds + "); the GPU waits "
            + formatDuration(context.perStep(idleNs)) + " per step meanwhile";
        f.detail = "A tensor factory op (" + kinds
            + ") that launched no GPU work, immediately followed on the same "
              "thread by aten::to/copy_ with a host-to-device copy: the tensor was built in host memory and then "
              "copied, step after step"
            + std::string(byFactory.count("torch.tensor") ? " (torch.tensor(data, device=...) does exactly that)" : "")
            + ". Copies from pageable memory are synchronous for the host, and without non_blocking=True PyTorch "
              "waits for the GPU to finish its queue. Tensors made inside or right after a DataLoader __next__ (the "
              "batch) are not counted.";
        f.evidence = std::move(e);
        if (mostCommon == "torch.tensor") {
            // torch.tensor(python_data, device=...) cannot be made on the GPU: the data lives on the host.
            f.fixPython = "# torch.tensor(data, device=device) fills a host tensor and copies it, blocking.\n"
                          "# Constant data: build it once, before the loop, and reuse it\n"
                          "offsets = torch.tensor(data, device=device)\n"
                          "# Derived from other tensors: compute it on the GPU (arange, cumsum, repeat_interleave)\n"
                          "# Data that really comes from the host each step: pinned memory and an asynchronous copy\n"
                          "t = torch.tensor(data).pin_memory().to(device, non_blocking=True)";
            f.fixCpp = "// Constant data: build it once, before the loop\n"
                       "static const auto offsets = torch::tensor(data, torch::TensorOptions().device(torch::kCUDA));\n"
                       "// Host data each step: pinned memory and an asynchronous copy\n"
                       "auto t = torch::tensor(data).pin_memory().to(torch::kCUDA, /*non_blocking=*/true);";
        } else {
            f.fixPython = "# Create the tensor on the GPU directly, e.g.\n"
                          "# before: x = torch.randn(5, 128).to(device)\n"
                          "x = "
                + pythonCall(mostCommon)
                + "\n"
                  "# constants that never change: create once, outside the loop, and reuse";
            f.fixCpp = "// before: auto x = torch::randn({5, 128}).to(torch::kCUDA);\n"
                       "auto x = "
                + cppCall(mostCommon) + ";";
        }
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeCpuTensorThenCopy() {
    return std::make_unique<CpuTensorThenCopy>();
}

} // namespace tuneup::rules

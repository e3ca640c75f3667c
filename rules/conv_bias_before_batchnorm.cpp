// conv-bias-before-batchnorm: a convolution with a bias whose output goes straight into BatchNorm,
// which subtracts the per-channel mean and so cancels the bias: wasted work in forward and backward.
// See conv-bias-before-batchnorm.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

bool isConvOp(std::string_view n) {
    return n == "aten::conv1d" || n == "aten::conv2d" || n == "aten::conv3d" || n == "aten::convolution"
        || n == "aten::_convolution" || n == "aten::cudnn_convolution" || n == "aten::conv_transpose1d"
        || n == "aten::conv_transpose2d" || n == "aten::conv_transpose3d";
}

// Norms that subtract a per-channel mean over the positions a conv bias is constant over.
bool isChannelNorm(std::string_view n) {
    return n.substr(0, 6) == "aten::" && n.find("backward") == std::string_view::npos
        && (n.find("batch_norm") != std::string_view::npos || n.find("instance_norm") != std::string_view::npos);
}

std::string dimsText(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i)
        s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

struct Pair {
    RowIndex conv = kNoRow, norm = kNoRow;
    int64_t biasNs = 0; // forward bias add and backward bias gradient kernels
};

class ConvBiasBeforeBatchnorm final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "conv-bias-before-batchnorm", "Convolution bias before BatchNorm",
            "A convolution with a bias feeds BatchNorm, whose mean subtraction cancels the bias: the bias add and its "
            "gradient are wasted work.",
            {}, false,
            "CPU operators with input shapes (record_shapes=True), or the model's layers from tuneup's Python "
            "bootstrap" };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();
        if (!context.has(Input::CpuOps) || !context.has(Input::InputShapes)) {
            evaluateLayers(context, outcome);
            return;
        }
        const auto& ops = m.cpuOps;

        // Convolutions with a bias, cheaply, before building anything.
        std::unordered_map<StringId, bool> convName;
        size_t convs = 0, convsWithBias = 0;
        std::vector<RowIndex> candidates;
        for (size_t i = 0; i < ops.size(); ++i) {
            auto [it, added] = convName.try_emplace(ops.name[i], false);
            if (added) it->second = isConvOp(m.str(ops.name[i]));
            if (!it->second || ops.thread[i] >= m.threads.size()) continue;
            const RowIndex parent = ops.parent[i];
            if (parent != kNoRow && convName[ops.name[size_t(parent)]])
                continue; // the outermost conv op of the chain (conv2d > convolution > _convolution > cudnn_...)
            ++convs;
            const auto dims = parseInputDims(m.str(ops.inputDims[i]));
            if (dims.size() < 3 || dims[2].empty() || dims[0].size() < 3 || dims[1].size() < 3) continue;
            ++convsWithBias;
            candidates.push_back(RowIndex(i));
        }
        if (candidates.empty()) {
            outcome.reason = std::to_string(convs) + " convolutions, none with a bias";
            return;
        }

        // Ops per thread in time order, and each op's position there.
        std::vector<std::vector<RowIndex>> byThread(m.threads.size());
        std::vector<uint32_t> position(ops.size(), 0);
        for (size_t i = 0; i < ops.size(); ++i) {
            if (ops.thread[i] >= byThread.size()) continue;
            position[i] = uint32_t(byThread[ops.thread[i]].size());
            byThread[ops.thread[i]].push_back(RowIndex(i));
        }
        // Kernels by the op that launched them.
        std::unordered_map<RowIndex, std::vector<RowIndex>> kernelsOf;
        for (size_t i = 0; i < m.kernels.size(); ++i)
            if (m.kernels.cpuOp[i] != kNoRow) kernelsOf[m.kernels.cpuOp[i]].push_back(RowIndex(i));
        // Backward nodes by autograd sequence number.
        std::unordered_map<int64_t, std::vector<RowIndex>> backwardBySeq;
        for (size_t i = 0; i < ops.size(); ++i)
            if (ops.sequenceNumber[i] >= 0 && m.str(ops.name[i]).find("Backward") != std::string_view::npos)
                backwardBySeq[ops.sequenceNumber[i]].push_back(RowIndex(i));

        // Calls f(op) for op and every op nested in it.
        auto forSubtree = [&](RowIndex root, auto&& f) {
            const size_t r = size_t(root);
            const auto& list = byThread[ops.thread[r]];
            for (size_t p = position[r]; p < list.size(); ++p) {
                const size_t i = size_t(list[p]);
                if (p > position[r] && (ops.startNs[i] >= ops.endNs[r] || ops.depth[i] <= ops.depth[r])) break;
                f(list[p]);
            }
        };

        std::vector<Pair> pairs;
        for (RowIndex row : candidates) {
            const size_t i = size_t(row);
            const std::string_view name = m.str(ops.name[i]);
            const RowIndex parent = ops.parent[i];
            const auto dims = parseInputDims(m.str(ops.inputDims[i]));
            // The next op at the same level of the same thread.
            const auto& list = byThread[ops.thread[i]];
            RowIndex next = kNoRow;
            for (size_t p = position[i] + 1; p < list.size(); ++p) {
                const size_t j = size_t(list[p]);
                if (ops.depth[j] > ops.depth[i]) continue; // nested in the conv
                if (ops.parent[j] == parent && ops.startNs[j] >= ops.endNs[i]) next = list[p];
                break;
            }
            if (next == kNoRow || !isChannelNorm(m.str(ops.name[size_t(next)]))) continue;
            // The norm's input must be the conv's output: same batch, channels = the conv's output channels.
            const auto normDims = parseInputDims(m.str(ops.inputDims[size_t(next)]));
            if (normDims.empty() || normDims[0].size() < 2 || normDims[0][0] != dims[0][0]) continue;
            const bool transposed = name.find("transpose") != std::string_view::npos;
            if (!transposed && normDims[0][1] != dims[1][0]) continue;
            if (normDims[0][1] != dims[2][0]) continue; // the bias has one value per output channel

            Pair pair { RowIndex(i), next, 0 };
            // Forward: kernels of the bias add inside the conv (aten::add_ under _convolution, cudnnAddTensor).
            std::vector<int64_t> seqs;
            forSubtree(RowIndex(i), [&](RowIndex op) {
                if (ops.sequenceNumber[size_t(op)] >= 0) seqs.push_back(ops.sequenceNumber[size_t(op)]);
                const std::string_view opName = m.str(ops.name[size_t(op)]);
                auto it = kernelsOf.find(op);
                if (it == kernelsOf.end()) return;
                for (RowIndex kr : it->second) {
                    const std::string_view kn = m.str(m.kernels.name[size_t(kr)]);
                    if (opName == "aten::add_" || opName == "aten::add"
                        || kn.find("add_tensor") != std::string_view::npos || kn.find("bias") != std::string_view::npos)
                        pair.biasNs += m.kernels.endNs[size_t(kr)] - m.kernels.startNs[size_t(kr)];
                }
            });
            // Backward: the bias gradient, a reduction of the output gradient over batch and positions.
            std::sort(seqs.begin(), seqs.end());
            seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
            for (int64_t seq : seqs) {
                auto it = backwardBySeq.find(seq);
                if (it == backwardBySeq.end()) continue;
                for (RowIndex node : it->second) {
                    const RowIndex up = ops.parent[size_t(node)];
                    if (up != kNoRow && ops.sequenceNumber[size_t(up)] == seq)
                        continue; // nested in a node already counted (evaluate_function > ConvolutionBackward0)
                    forSubtree(node, [&](RowIndex op) {
                        auto kt = kernelsOf.find(op);
                        if (kt == kernelsOf.end()) return;
                        for (RowIndex kr : kt->second) {
                            const std::string_view kn = m.str(m.kernels.name[size_t(kr)]);
                            if (context.kernelClass(size_t(kr)) == KernelClass::Reduction
                                || kn.find("bias") != std::string_view::npos)
                                pair.biasNs += m.kernels.endNs[size_t(kr)] - m.kernels.startNs[size_t(kr)];
                        }
                    });
                }
            }
            pairs.push_back(pair);
        }

        if (pairs.empty()) {
            outcome.reason = std::to_string(convs) + " convolutions, " + std::to_string(convsWithBias)
                + " with a bias, none followed by BatchNorm/InstanceNorm";
            return;
        }

        // Group by shape for the evidence.
        std::map<std::string, std::pair<size_t, int64_t>> shapes;
        int64_t biasNs = 0;
        Evidence e;
        for (const Pair& p : pairs) {
            biasNs += p.biasNs;
            const auto dims = parseInputDims(m.str(ops.inputDims[size_t(p.conv)]));
            const std::string key = std::string(m.str(ops.name[size_t(p.conv)])) + " " + dimsText(dims[0]) + " * "
                + dimsText(dims[1]) + " + bias " + dimsText(dims[2]) + " -> "
                + std::string(m.str(ops.name[size_t(p.norm)]));
            auto& s = shapes[key];
            ++s.first;
            s.second += p.biasNs;
            if (e.events.size() < 50) {
                e.events.push_back({ EventTable::CpuOp, p.conv });
                e.events.push_back({ EventTable::CpuOp, p.norm });
            }
        }
        e.eventsTotal = pairs.size() * 2;
        const size_t steps = std::max<size_t>(context.stepCount(), 1);
        e.facts = { { "convolutions with a bias followed by a norm",
                        std::to_string(pairs.size()) + " (" + std::to_string(pairs.size() / steps) + " per step)" },
            { "bias add and bias-gradient kernels",
                formatDuration(biasNs) + " (" + formatDuration(context.perStep(biasNs)) + " per step)" } };
        for (const auto& [key, s] : shapes)
            if (e.facts.size() < 10)
                e.facts.emplace_back(
                    key, std::to_string(s.first) + " calls, " + formatDuration(s.second) + " of bias kernels");

        Finding f;
        f.gain = context.gain(context.perStep(biasNs),
            "removing the bias removes its add in forward and its gradient reduction in backward: the time of "
            "those kernels",
            "medium");
        f.severity = f.gain->stepShare >= 0.015 ? Severity::Warning : Severity::Info;
        f.title = std::to_string(pairs.size() / steps) + " convolutions per step add a bias that the following "
            + (m.str(ops.name[size_t(pairs.front().norm)]).find("instance") != std::string_view::npos ? "InstanceNorm"
                                                                                                      : "BatchNorm")
            + " cancels (" + formatDuration(context.perStep(biasNs)) + " of bias kernels per step)";
        f.detail = "Each convolution op whose bias input is not empty and whose next op on the same thread is a batch "
                   "or instance norm of its output (same batch size and channels) was counted. The norm subtracts "
                   "the per-channel mean, which contains the bias, so the output does not depend on it: the bias add, "
                   "its gradient and its optimizer update are wasted, and the parameter only takes memory. The "
                   "kernels of the bias add (forward) and of the bias gradient (backward, matched by autograd "
                   "sequence number) give the time.";
        f.evidence = std::move(e);
        addFixes(f);
        outcome.findings.push_back(std::move(f));
    }

private:
    // Without the operators, the model's layers as tuneup's Python bootstrap recorded them: a
    // convolution with a bias whose next sibling layer normalises its output channels.
    static void evaluateLayers(const RuleContext& context, RuleOutcome& outcome) {
        const TraceModel& m = context.model();
        const auto wasted = programFact(m, "tuneup.model.conv_bias_before_norm");
        if (!wasted) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::CpuOps)) + " with "
                + std::string(inputName(Input::InputShapes))
                + ", or the model's layers (recorded by tuneup's "
                  "Python bootstrap)";
            return;
        }
        const int64_t convs = programFact(m, "tuneup.model.convolutions").value_or(0);
        if (*wasted == 0) {
            outcome.reason = std::to_string(convs)
                + " convolution layers, none with a bias right before a norm "
                  "(recorded layers)";
            return;
        }
        Finding f;
        f.severity = Severity::Info;
        f.title = std::to_string(*wasted) + " of the model's " + std::to_string(convs)
            + " convolution layers add a bias that the BatchNorm or InstanceNorm right after them cancels";
        f.detail = "tuneup's Python bootstrap read the model's layers when it was first called: a Conv layer with "
                   "bias=True whose next layer in the same container is a BatchNorm or InstanceNorm over its "
                   "output channels. The norm subtracts the per-channel mean, which contains the bias, so the "
                   "bias add, its gradient and its optimizer update are wasted. The recording has no operator "
                   "timings, so the time it costs is not measured (record with torch.profiler, or on a GPU, to see "
                   "the bias kernels).";
        f.evidence.facts = { { "convolution layers (recorded)", std::to_string(convs) },
            { "with a bias right before a norm", std::to_string(*wasted) } };
        addFixes(f);
        outcome.findings.push_back(std::move(f));
    }

    static void addFixes(Finding& f) {
        f.fixPython = "# A convolution followed by BatchNorm needs no bias:\n"
                      "nn.Sequential(\n"
                      "    nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1, bias=False),\n"
                      "    nn.BatchNorm2d(out_ch),\n"
                      "    nn.ReLU(inplace=True),\n"
                      ")\n"
                      "# Converting a trained model: fold the bias into the norm's running mean first\n"
                      "with torch.no_grad():\n"
                      "    bn.running_mean -= conv.bias\n"
                      "    conv.bias = None";
        f.fixCpp = "torch::nn::Sequential block(\n"
                   "    torch::nn::Conv2d(torch::nn::Conv2dOptions(in_ch, out_ch, 3).padding(1).bias(false)),\n"
                   "    torch::nn::BatchNorm2d(out_ch),\n"
                   "    torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));";
    }
};

} // namespace

std::unique_ptr<Rule> makeConvBiasBeforeBatchnorm() {
    return std::make_unique<ConvBiasBeforeBatchnorm>();
}

} // namespace tuneup::rules

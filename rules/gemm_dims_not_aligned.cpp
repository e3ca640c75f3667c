// gemm-dims-not-aligned: matrix multiplies whose M, N or K is not a multiple of 16 bytes' worth of
// elements (8 for fp16/bf16, 4 for fp32/tf32, 16 for int8/fp8). See gemm-dims-not-aligned.md.

#include "advise/gemm_shapes.h"
#include "advise/library_kernels.h"
#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// Unaligned GEMMs cost about this share of their kernel time (cuBLAS >= 11 still uses tensor cores,
// with narrower loads: NVIDIA's Matrix Multiplication Background guide shows 10-30 %).
constexpr double kTensorCoreLoss = 0.20;
constexpr double kCudaCoreLoss = 0.10; // fp32 SIMT kernels (sgemm): vector loads only
constexpr double kQuietShare = 0.005; // below half a percent of the step: not worth a finding

std::string dimName(char which, int64_t value) {
    return std::string(1, which) + "=" + std::to_string(value);
}

// A group of ops with the same shape and dtype, for the evidence.
struct ShapeGroup {
    std::string shape; // "aten::addmm [141,512]x[512,30522] bf16"
    std::string unaligned; // "N=30522"
    std::vector<int64_t> values; // the unaligned dims' values
    int bytes = 0; // element size
    int64_t ops = 0, kernelNs = 0;
    bool weighed = false;
};

// "3137 -> 3144 (16-bit: multiples of 8)" for the costliest unaligned dims of the weighed groups.
std::string paddingText(const std::vector<const ShapeGroup*>& sorted) {
    std::string padding;
    std::vector<int64_t> seen;
    for (const ShapeGroup* g : sorted) {
        if (!g->weighed) continue;
        for (int64_t v : g->values) {
            if (seen.size() >= 4 || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
            seen.push_back(v);
            const int64_t align = std::max<int64_t>(1, 16 / std::max(1, g->bytes));
            const int64_t to = (v + align - 1) / align * align;
            padding += (padding.empty() ? "" : ", ") + std::to_string(v) + " -> " + std::to_string(to) + " ("
                + std::to_string(g->bytes * 8) + "-bit: multiples of " + std::to_string(align) + ")";
        }
    }
    return padding;
}

void setFixes(Finding& f, const std::string& padding) {
    f.fixPython = "# Unaligned here: " + padding
        + "\n"
          "# Pad feature sizes to multiples of 8 (fp16/bf16; 4 suffice for fp32/tf32, 16 for int8/fp8):\n"
          "fc = nn.Linear(1001, 30)  # before\n"
          "fc = nn.Linear(1008, 32)  # after: zero-pad the inputs, slice the outputs [..., :30]\n"
          "# Vocabulary / embedding heads: round up to a multiple of 64\n"
          "vocab = (vocab_size + 63) // 64 * 64\n"
          "# Token counts: pick batch sizes and (padded) sequence lengths that are multiples of 8\n"
          "tok = tokenizer(texts, padding=True, pad_to_multiple_of=8, return_tensors=\"pt\")";
    f.fixCpp = "// Unaligned here: " + padding
        + "\n"
          "// Pad feature sizes to multiples of 8 (fp16/bf16):\n"
          "auto fc = torch::nn::Linear(1008, 32);  // was Linear(1001, 30)\n"
          "namespace F = torch::nn::functional;\n"
          "auto y = fc(F::pad(x, F::PadFuncOptions({0, 1008 - 1001}))).slice(/*dim=*/-1, 0, 30);\n"
          "int64_t vocab = (vocab_size + 63) / 64 * 64;  // vocabulary heads: multiple of 64";
}

class GemmDimsNotAligned final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "gemm-dims-not-aligned", "GEMM dimensions not aligned",
            "Matrix multiplies whose M, N or K is not a multiple of 16 bytes (8 fp16/bf16, 4 fp32/tf32, 16 int8/fp8 "
            "elements) run slower kernels.",
            { Input::InputShapes, Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        // The calls the agent recorded are exact (the library's own M, N, K and leading dimensions); the
        // framework ops' input shapes are the fallback.
        if (evaluateRecordedCalls(context, outcome)) return;
        const TraceModel& m = context.model();
        const auto& ops = m.cpuOps;
        if (ops.empty()) {
            outcome.status = RuleStatus::NotEvaluated;
            outcome.reason = "needs " + std::string(inputName(Input::CpuOps))
                + " with their input shapes, or GEMM "
                  "calls tied to their kernels";
            return;
        }

        // The innermost GEMM ops and the GEMM kernels each launched.
        GemmOps gemm = gemmOps(m, [&context](size_t i) { return context.kernelClass(i) == KernelClass::Gemm; });
        if (gemm.count == 0) {
            outcome.reason = "no matrix-multiply ops (aten::mm, addmm, bmm, baddbmm, linear, matmul) in the trace";
            return;
        }
        std::unordered_map<RowIndex, GemmKernels>& leaves = gemm.innermost;
        const auto& k = m.kernels;

        int64_t weighedNs = 0, gainNs = 0, tokenOnlyNs = 0, alignedNs = 0, allNs = 0, narrowNs = 0;
        int64_t weighedOps = 0, tokenOnlyOps = 0, unknownType = 0;
        bool anyTensorCore = false, anyNarrow = false;
        std::map<std::string, ShapeGroup> groups;
        Evidence evidence;
        std::vector<std::pair<int64_t, RowIndex>> weighedRows; // (kernel time, op) for the evidence
        // Shape, element size and unaligned dims per distinct (op name, dims, types, kernel precision).
        struct Parsed {
            bool ok = false;
            bool unknownType = false; // a GEMM shape, but no element size from the types or the kernel
            int bytes = 0;
            bool mOff = false, nOff = false, kOff = false;
            std::string key, unaligned; // "aten::addmm M=141 N=30522 K=512 (16-bit)", "N=30522"
            std::vector<int64_t> values;
        };
        std::map<std::tuple<StringId, StringId, StringId, Precision>, Parsed> parsed;
        auto parse = [&](size_t i, Precision precision) -> const Parsed& {
            auto [it, added] = parsed.try_emplace({ ops.name[i], ops.inputDims[i], ops.inputTypes[i], precision });
            Parsed& p = it->second;
            if (!added) return p;
            const std::string_view name = m.str(ops.name[i]);
            const auto shape = gemmShape(name, parseInputDims(m.str(ops.inputDims[i])));
            if (!shape) return p;
            const auto types = splitInputTypes(m.str(ops.inputTypes[i]));
            p.bytes = types.size() > shape->matrixInput ? torchTypeBytes(types[shape->matrixInput]) : 0;
            if (p.bytes == 0) p.bytes = precisionBytes(precision);
            if (p.bytes == 0) {
                p.unknownType = true;
                return p;
            }
            p.ok = true;
            p.mOff = unalignedDim(shape->m, p.bytes);
            p.nOff = unalignedDim(shape->n, p.bytes);
            p.kOff = unalignedDim(shape->k, p.bytes);
            for (auto [isOff, c, v] : { std::tuple { p.mOff, 'M', shape->m }, std::tuple { p.nOff, 'N', shape->n },
                     std::tuple { p.kOff, 'K', shape->k } })
                if (isOff) {
                    p.unaligned += (p.unaligned.empty() ? "" : ", ") + dimName(c, v);
                    p.values.push_back(v);
                }
            p.key = std::string(name) + " M=" + std::to_string(shape->m) + " N=" + std::to_string(shape->n)
                + " K=" + std::to_string(shape->k);
            if (shape->batch > 1) p.key += " batch=" + std::to_string(shape->batch);
            p.key += " (" + std::to_string(p.bytes * 8) + "-bit)";
            return p;
        };

        for (const auto& [row, leaf] : leaves) {
            const size_t i = size_t(row);
            allNs += leaf.kernelNs;
            const Parsed& p = parse(i, leaf.precision);
            if (!p.ok) {
                unknownType += p.unknownType;
                continue;
            }
            if (!p.mOff && !p.nOff && !p.kOff) {
                alignedNs += leaf.kernelNs;
                continue;
            }
            // M (the rows: tokens) is a leading dimension only of a transposed operand, as in the
            // weight-gradient GEMMs of backward. In a forward aten::linear the input is row-major and M
            // only changes how full the last tile is, which padding M to 8 does not fix.
            bool underLinear = false;
            for (RowIndex q = RowIndex(i); q != kNoRow && !underLinear; q = ops.parent[size_t(q)])
                underLinear = m.str(ops.name[size_t(q)]) == "aten::linear";
            const bool weighed = p.nOff || p.kOff || !underLinear;
            ShapeGroup& g = groups[p.key + (weighed ? "" : "#token")];
            g.shape = p.key;
            g.unaligned = p.unaligned;
            g.values = p.values;
            g.bytes = p.bytes;
            ++g.ops;
            g.kernelNs += leaf.kernelNs;
            g.weighed = weighed;
            if (!weighed) {
                tokenOnlyNs += leaf.kernelNs;
                ++tokenOnlyOps;
                continue;
            }
            const bool tensorCore = p.bytes <= 2 || usesTensorCores(leaf.precision);
            anyTensorCore = anyTensorCore || tensorCore;
            ++weighedOps;
            weighedNs += leaf.kernelNs;
            gainNs += int64_t(double(leaf.kernelNs) * (tensorCore ? kTensorCoreLoss : kCudaCoreLoss));
            if (leaf.narrowKernel) {
                anyNarrow = true;
                narrowNs += leaf.kernelNs;
            }
            weighedRows.emplace_back(leaf.kernelNs, row);
        }

        // The shapes, largest kernel time first, and the unaligned values they show.
        std::vector<const ShapeGroup*> sorted;
        sorted.reserve(groups.size());
        for (const auto& [key, g] : groups)
            sorted.push_back(&g);
        std::sort(sorted.begin(), sorted.end(), [](const ShapeGroup* a, const ShapeGroup* b) {
            return a->weighed != b->weighed ? a->weighed : a->kernelNs > b->kernelNs;
        });
        auto valuesText = [&](bool weighedOnly) {
            std::vector<int64_t> seen;
            std::string text;
            for (const ShapeGroup* g : sorted) {
                if (weighedOnly && !g->weighed) continue;
                for (int64_t v : g->values) {
                    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
                    seen.push_back(v);
                    if (seen.size() <= 5) text += (text.empty() ? "" : ", ") + std::to_string(v);
                }
            }
            return seen.size() > 5 ? text + ", ..." : text;
        };
        auto checked = [&] {
            return std::to_string(leaves.size()) + " GEMM ops with kernels (" + formatDuration(allNs)
                + " of GEMM time)";
        };
        if (weighedOps == 0) {
            outcome.reason = checked() + ": ";
            if (tokenOnlyOps > 0)
                outcome.reason += std::to_string(tokenOnlyOps) + " have only an unaligned token count M ("
                    + valuesText(false)
                    + ") in a forward linear (not a leading dimension; padding it gains nothing), "
                      "the rest are aligned";
            else
                outcome.reason += "all dimensions aligned to 16 bytes";
            if (unknownType) outcome.reason += "; " + std::to_string(unknownType) + " of unknown dtype skipped";
            return;
        }
        const int64_t perStepGain = context.perStep(gainNs);
        Gain gain = context.gain(perStepGain,
            "unaligned GEMMs cost about " + formatPercent(kTensorCoreLoss) + " of their kernel time on tensor cores ("
                + formatPercent(kCudaCoreLoss) + " for fp32 CUDA-core kernels) against their padded twins: "
                + "that share of the time of the " + std::to_string(weighedOps) + " unaligned GEMMs",
            anyNarrow ? "medium" : "low");
        // Without steps, weigh against the GPU's busy time over the trace.
        double share = gain.stepShare;
        if (context.stepNs() == 0) {
            int64_t busy = 0;
            for (size_t i = 0; i < k.size(); ++i)
                busy += k.endNs[i] - k.startNs[i];
            share = busy > 0 ? double(gainNs) / double(busy) : 0;
        }
        const std::string dims = valuesText(true);
        if (share < kQuietShare) {
            outcome.reason = checked() + ": " + std::to_string(weighedOps) + " have unaligned dimensions (" + dims
                + ") but take " + formatDuration(context.perStep(weighedNs)) + " per step; padding would save "
                + formatDuration(perStepGain) + " (" + formatPercent(share) + "): negligible";
            return;
        }

        int shown = 0;
        for (const ShapeGroup* g : sorted)
            if (shown++ < 8)
                evidence.facts.emplace_back(g->shape,
                    g->unaligned + " unaligned; " + std::to_string(g->ops) + " calls, " + formatDuration(g->kernelNs)
                        + " of kernels" + (g->weighed ? "" : " (token count only: not weighed)"));
        evidence.facts.insert(evidence.facts.begin(),
            { { "unaligned GEMM calls (weighed)", std::to_string(weighedOps) },
                { "their kernel time",
                    formatDuration(weighedNs) + " (" + formatDuration(context.perStep(weighedNs)) + " per step)" },
                { "aligned GEMM kernel time", formatDuration(alignedNs) } });
        if (tokenOnlyOps)
            evidence.facts.insert(evidence.facts.begin() + 3,
                { "forward GEMMs with only M (tokens) unaligned",
                    std::to_string(tokenOnlyOps) + ", " + formatDuration(tokenOnlyNs)
                        + " (not weighed: M is not a leading dimension there)" });
        if (anyNarrow)
            evidence.facts.emplace_back("cuBLAS chose narrow-load kernels (_align1/_align2)",
                formatDuration(narrowNs) + " of the unaligned GEMMs' time");
        std::sort(weighedRows.begin(), weighedRows.end(), std::greater<>());
        for (const auto& [ns, row] : weighedRows) {
            if (evidence.events.size() >= 50) break;
            evidence.events.push_back({ EventTable::CpuOp, row });
            if (leaves[row].firstKernel != kNoRow)
                evidence.events.push_back({ EventTable::Kernel, leaves[row].firstKernel });
        }
        evidence.eventsTotal = size_t(weighedOps) * 2; // each op and its GEMM kernel

        const std::string padding = paddingText(sorted);
        Finding f;
        f.severity = share >= 0.20 ? Severity::Error : share >= 0.015 ? Severity::Warning : Severity::Info;
        f.title = std::to_string(weighedOps) + " GEMM calls have dimensions that are not multiples of 16 bytes (" + dims
            + "); they take " + formatDuration(context.perStep(weighedNs)) + " per step";
        f.detail = "M, N and K of every matrix-multiply op were read from its input shapes (aten::mm [M,K]x[K,N], "
                   "addmm (bias, [M,K], [K,N]), bmm/baddbmm batched, linear (input [...,K], weight [N,K])) and checked "
                   "against 16 bytes: 8 elements for fp16/bf16, 4 for fp32/tf32, 16 for int8/fp8. The GEMM kernels "
                   "each op launched give its cost. Since cuBLAS 11 unaligned GEMMs still use tensor cores, only with "
                   "narrower memory accesses and less efficient kernels. N and K are feature sizes (hidden, "
                   "vocabulary, heads): pad them. M is the token count (batch x sequence); it matters where it "
                   "becomes a leading dimension, as in backward's weight-gradient GEMMs: choose batch sizes and "
                   "sequence lengths that are multiples of 8.";
        if (anyTensorCore && !anyNarrow)
            f.detail += " Measure with `tuneup bench`, which times the recorded shapes against their padded twins.";
        f.gain = std::move(gain);
        f.evidence = std::move(evidence);
        setFixes(f, padding);
        outcome.findings.push_back(std::move(f));
    }

private:
    // The GEMM calls the agent's interposers recorded (cuBLAS / cuBLASLt, column-major: op(A) m x k, op(B)
    // k x n, C m x n), weighed by the kernels each launched. False when there are none tied to kernels:
    // the framework ops' shapes are then used.
    bool evaluateRecordedCalls(const RuleContext& context, RuleOutcome& outcome) const {
        const TraceModel& m = context.model();
        const GemmCallTable& g = m.gemmCalls;
        if (g.empty()) return false;
        const CallKernels linked = gemmCallKernels(m);
        const auto& k = m.kernels;
        std::map<std::string, ShapeGroup> groups;
        struct Weighed {
            int64_t ns;
            size_t call;
            RowIndex firstKernel;
        };
        std::vector<Weighed> weighedCalls;
        int64_t allNs = 0, alignedNs = 0, weighedNs = 0, gainNs = 0, narrowNs = 0, notLeadingNs = 0;
        size_t withKernels = 0, unknownType = 0, notLeadingCalls = 0;
        bool anyTensorCore = false, anyNarrow = false;
        for (size_t i = 0; i < g.size(); ++i) {
            const auto kernels = linked.of(i);
            if (kernels.empty()) continue;
            ++withKernels;
            GemmKernels launched;
            for (RowIndex r : kernels)
                launched.add(m, r);
            const int64_t ns = launched.kernelNs;
            const Precision precision = launched.precision;
            const bool narrow = launched.narrowKernel;
            allNs += ns;
            int bytes = cudaTypeBytes(g.aType[i]);
            if (bytes == 0) bytes = precisionBytes(precision);
            if (bytes == 0) {
                ++unknownType;
                continue;
            }
            auto off = [bytes](int64_t v) { return unalignedDim(v, bytes); };
            // Leading dimensions decide the loads; K also the inner loop. An unaligned M or N that is no
            // leading dimension (the token count of a forward Linear) only fills the last tile less.
            std::string unaligned;
            std::vector<int64_t> values;
            bool weighed = false;
            auto note = [&](const char* label, int64_t v, bool counts) {
                if (!off(v)) return;
                unaligned += (unaligned.empty() ? "" : ", ") + std::string(label) + "=" + std::to_string(v);
                if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
                weighed = weighed || counts;
            };
            note("M", g.m[i], false);
            note("N", g.n[i], false);
            note("K", g.k[i], true);
            note("lda", g.lda[i], true);
            note("ldb", g.ldb[i], true);
            note("ldc", g.ldc[i], true);
            if (unaligned.empty()) {
                alignedNs += ns;
                continue;
            }
            std::string shape = std::string(m.str(g.name[i])) + " " + (g.transa[i] == 0 ? "N" : "T")
                + (g.transb[i] == 0 ? "N" : "T") + " M=" + std::to_string(g.m[i]) + " N=" + std::to_string(g.n[i])
                + " K=" + std::to_string(g.k[i]) + " lda=" + std::to_string(g.lda[i])
                + " ldb=" + std::to_string(g.ldb[i]) + " ldc=" + std::to_string(g.ldc[i]);
            if (g.batch[i] > 1) shape += " batch=" + std::to_string(g.batch[i]);
            shape += " (" + cudaTypeName(g.aType[i]) + ")";
            ShapeGroup& group = groups[shape];
            group.shape = shape;
            group.unaligned = unaligned;
            group.values = values;
            group.bytes = bytes;
            ++group.ops;
            group.kernelNs += ns;
            group.weighed = weighed;
            if (!weighed) {
                notLeadingNs += ns;
                ++notLeadingCalls;
                continue;
            }
            const bool tensorCore = bytes <= 2 || fastTensorCoreCompute(g.computeType[i]) || usesTensorCores(precision);
            anyTensorCore = anyTensorCore || tensorCore;
            weighedNs += ns;
            gainNs += int64_t(double(ns) * (tensorCore ? kTensorCoreLoss : kCudaCoreLoss));
            if (narrow) {
                anyNarrow = true;
                narrowNs += ns;
            }
            weighedCalls.push_back({ ns, i, kernels.front() });
        }
        if (withKernels == 0) return false; // no call tied to a kernel (no GPU capture): nothing to weigh with
        const std::string checked = std::to_string(withKernels) + " recorded GEMM calls with kernels ("
            + formatDuration(allNs) + " of GEMM time)";
        std::vector<const ShapeGroup*> sorted;
        sorted.reserve(groups.size());
        for (const auto& [key, group] : groups)
            sorted.push_back(&group);
        std::sort(sorted.begin(), sorted.end(), [](const ShapeGroup* a, const ShapeGroup* b) {
            return a->weighed != b->weighed ? a->weighed : a->kernelNs > b->kernelNs;
        });
        std::string dims;
        {
            std::vector<int64_t> seen;
            for (const ShapeGroup* group : sorted)
                for (int64_t v : group->values)
                    if (group->weighed && std::find(seen.begin(), seen.end(), v) == seen.end()) {
                        seen.push_back(v);
                        if (seen.size() <= 5)
                            dims += (dims.empty() ? "" : ", ") + std::to_string(v);
                        else if (seen.size() == 6)
                            dims += ", ...";
                    }
        }
        if (weighedCalls.empty()) {
            outcome.reason = checked + ": "
                + (notLeadingCalls ? std::to_string(notLeadingCalls)
                            + " have only an unaligned M or N that is no leading dimension (padding it gains nothing), "
                              "the rest are aligned"
                                   : std::string("all dimensions and leading dimensions aligned to 16 bytes"));
            if (unknownType) outcome.reason += "; " + std::to_string(unknownType) + " of unknown data type skipped";
            return true;
        }
        const int64_t perStepGain = context.perStep(gainNs);
        Gain gain = context.gain(perStepGain,
            "unaligned GEMMs cost about " + formatPercent(kTensorCoreLoss) + " of their kernel time on tensor cores ("
                + formatPercent(kCudaCoreLoss) + " for fp32 CUDA-core kernels) against their padded twins: "
                + "that share of the time of the " + std::to_string(weighedCalls.size()) + " unaligned GEMM calls",
            anyNarrow ? "medium" : "low");
        double share = gain.stepShare;
        if (context.stepNs() == 0) {
            int64_t busy = 0;
            for (size_t i = 0; i < k.size(); ++i)
                busy += k.endNs[i] - k.startNs[i];
            share = busy > 0 ? double(gainNs) / double(busy) : 0;
        }
        if (share < kQuietShare) {
            outcome.reason = checked + ": " + std::to_string(weighedCalls.size()) + " have unaligned dimensions ("
                + dims + ") but take " + formatDuration(context.perStep(weighedNs)) + " per step; padding would save "
                + formatDuration(perStepGain) + " (" + formatPercent(share) + "): negligible";
            return true;
        }
        Evidence evidence;
        evidence.facts = { { "source",
                               "GEMM calls recorded from cuBLAS/cuBLASLt (" + std::to_string(withKernels)
                                   + " tied to their kernels)" },
            { "unaligned GEMM calls (weighed)", std::to_string(weighedCalls.size()) },
            { "their kernel time",
                formatDuration(weighedNs) + " (" + formatDuration(context.perStep(weighedNs)) + " per step)" },
            { "aligned GEMM kernel time", formatDuration(alignedNs) } };
        if (notLeadingCalls)
            evidence.facts.push_back({ "GEMMs with only an unaligned M or N that is no leading dimension",
                std::to_string(notLeadingCalls) + ", " + formatDuration(notLeadingNs) + " (not weighed)" });
        int shown = 0;
        for (const ShapeGroup* group : sorted)
            if (shown++ < 8)
                evidence.facts.emplace_back(group->shape,
                    group->unaligned + " unaligned; " + std::to_string(group->ops) + " calls, "
                        + formatDuration(group->kernelNs) + " of kernels" + (group->weighed ? "" : " (not weighed)"));
        if (anyNarrow)
            evidence.facts.emplace_back("cuBLAS chose narrow-load kernels (_align1/_align2)",
                formatDuration(narrowNs) + " of the unaligned GEMMs' time");
        std::sort(weighedCalls.begin(), weighedCalls.end(),
            [](const Weighed& a, const Weighed& b) { return a.ns != b.ns ? a.ns > b.ns : a.call < b.call; });
        for (const Weighed& w : weighedCalls) {
            if (evidence.events.size() >= 50) break;
            evidence.events.push_back({ EventTable::GemmCall, RowIndex(w.call) });
            evidence.events.push_back({ EventTable::Kernel, w.firstKernel });
        }
        evidence.eventsTotal = weighedCalls.size() * 2; // each call and its first kernel

        Finding f;
        f.severity = share >= 0.20 ? Severity::Error : share >= 0.015 ? Severity::Warning : Severity::Info;
        f.title = std::to_string(weighedCalls.size())
            + " GEMM calls have dimensions that are not multiples of 16 bytes (" + dims + "); they take "
            + formatDuration(context.perStep(weighedNs)) + " per step";
        f.detail = "The agent recorded every cuBLAS/cuBLASLt GEMM call with M, N, K and the leading dimensions as the "
                   "library saw them (column-major: op(A) is M x K, op(B) K x N, C M x N), and the kernels each call "
                   "launched give its cost. Dimensions were checked against 16 bytes: 8 elements for fp16/bf16, 4 for "
                   "fp32/tf32, 16 for int8/fp8. A leading dimension or K that is not a multiple forces narrower loads "
                   "and less efficient kernels (tensor cores are still used since cuBLAS 11). An M or N that is no "
                   "leading dimension -- the token count of a forward Linear -- only fills the last tile less: listed, "
                   "not weighed. In PyTorch terms a Linear(in, out) on T tokens is M = out, N = T, K = in.";
        if (anyTensorCore && !anyNarrow)
            f.detail += " Measure with `tuneup bench`, which times the recorded shapes against their padded twins.";
        f.gain = std::move(gain);
        f.evidence = std::move(evidence);
        setFixes(f, paddingText(sorted));
        outcome.findings.push_back(std::move(f));
        return true;
    }
};

} // namespace

std::unique_ptr<Rule> makeGemmDimsNotAligned() {
    return std::make_unique<GemmDimsNotAligned>();
}

} // namespace tuneup::rules

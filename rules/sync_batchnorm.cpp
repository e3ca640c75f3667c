#include "sync_batchnorm.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace tuneup::rules {

using namespace analysis;

namespace {

enum class BnOp {
    None,
    Plain, // a forward BatchNorm op (aten::batch_norm and what it dispatches to)
    SyncFunction, // SyncBatchNorm's autograd function, forward ("SyncBatchNorm") or backward
    SyncStats, // aten::batch_norm_stats: SyncBatchNorm's local statistics, its input is the layer's
    SyncGather, // aten::batch_norm_gather_stats(_with_counts): the statistics of every rank combined
    OtherNorm, // InstanceNorm (and old GroupNorm) run aten::batch_norm on a reshaped input of batch 1
};

BnOp classifyOp(std::string_view n) {
    if (n == "SyncBatchNorm" || n.find("SyncBatchNormBackward") != std::string_view::npos) return BnOp::SyncFunction;
    if (n == "aten::batch_norm_stats") return BnOp::SyncStats;
    if (n == "aten::batch_norm_gather_stats_with_counts" || n == "aten::batch_norm_gather_stats")
        return BnOp::SyncGather;
    if (n.find("backward") != std::string_view::npos) return BnOp::None;
    if (n == "aten::instance_norm" || n == "aten::group_norm") return BnOp::OtherNorm;
    // aten::batch_norm > _batch_norm_impl_index > cudnn_batch_norm / native_batch_norm / miopen_batch_norm;
    // 2.x: _native_batch_norm_legit, _batch_norm_with_update.
    if (n == "aten::batch_norm" || n == "aten::_batch_norm_impl_index" || n == "aten::cudnn_batch_norm"
        || n == "aten::native_batch_norm" || n == "aten::miopen_batch_norm" || n == "aten::_native_batch_norm_legit"
        || n == "aten::_batch_norm_with_update")
        return BnOp::Plain;
    return BnOp::None;
}

enum class BnKernel { None, PlainForward, NativeStatistics, SyncReduce };

BnKernel classifyKernel(std::string_view n) {
    // cuDNN's training-mode forward (bn_fw_tr_1C11_*, NHWC batchnorm_fwtr_*); its inference kernels (bn_fw_inf)
    // use the running statistics and are not what this is about.
    if (n.find("bn_fw_tr") != std::string_view::npos || n.find("batchnorm_fwtr") != std::string_view::npos)
        return BnKernel::PlainForward;
    // ATen's own: launched by native BatchNorm and by SyncBatchNorm's batch_norm_stats alike.
    if (n.find("batch_norm_collect_statistics") != std::string_view::npos) return BnKernel::NativeStatistics;
    if (n.find("batch_norm_reduce_statistics") != std::string_view::npos) return BnKernel::SyncReduce;
    return BnKernel::None;
}

// The batch of an op whose first input is the normalised tensor ([N, C, ...]); 0 when unknown.
int64_t batchOf(const TraceModel& m, size_t op) {
    if (m.cpuOps.inputDims[op] == kEmptyString) return 0;
    const auto dims = parseInputDims(m.str(m.cpuOps.inputDims[op]));
    return !dims.empty() && dims[0].size() >= 2 && dims[0][0] > 0 ? dims[0][0] : 0;
}

std::string countText(size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

} // namespace

std::optional<int64_t> BatchNormUse::batch(bool sync, std::string* from) const {
    const auto& batches = sync ? syncBatches : plainBatches;
    if (!batches.empty()) {
        const auto most = std::max_element(
            batches.begin(), batches.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        if (from) {
            size_t calls = 0;
            for (const auto& [b, n] : batches)
                calls += n;
            *from = std::string("the input shape of ") + (sync ? "SyncBatchNorm's" : "BatchNorm's") + " ops ("
                + std::to_string(most->second) + " of " + std::to_string(calls) + ")";
        }
        return most->first;
    }
    if (loaderBatch) {
        if (from) *from = "the DataLoader's batch_size (recorded by tuneup's Python bootstrap)";
        return loaderBatch;
    }
    return std::nullopt;
}

std::string BatchNormUse::plainText() const {
    if (plainLayers) return countText(size_t(*plainLayers), "BatchNorm layer", "BatchNorm layers") + " (recorded)";
    if (plainCalls) return countText(plainCalls, "BatchNorm call", "BatchNorm calls");
    return countText(plainKernels, "training-mode BatchNorm kernel", "training-mode BatchNorm kernels");
}

std::string BatchNormUse::syncText() const {
    if (syncLayers)
        return countText(size_t(*syncLayers), "SyncBatchNorm layer", "SyncBatchNorm layers") + " (recorded)";
    if (syncCalls) return countText(syncCalls, "SyncBatchNorm call", "SyncBatchNorm calls");
    return countText(syncKernels, "SyncBatchNorm statistics kernel", "SyncBatchNorm statistics kernels");
}

BatchNormUse readBatchNormUse(const RuleContext& context) {
    const TraceModel& m = context.model();
    BatchNormUse use;

    // How many processes: the bootstrap saw torch.distributed's; else the trace says, or the job has ranks.
    if (const auto world = programFact(m, "tuneup.ddp.world_size"); world && *world > 0) {
        use.worldSize = *world;
        use.worldFrom = "the world size DistributedDataParallel ran with (recorded by tuneup's Python bootstrap)";
    } else if (m.info.worldSize && *m.info.worldSize > 0) {
        use.worldSize = *m.info.worldSize;
        use.worldFrom = "the trace's distributed info";
    } else if (context.jobRanks() > 1) {
        use.worldSize = int64_t(context.jobRanks());
        use.worldFrom = "the job's rank traces";
    } else {
        int32_t group = 0;
        for (int32_t size : m.collectives.groupSize)
            group = std::max(group, size);
        if (group > 1) {
            use.worldSize = group;
            use.worldFrom = "the collectives' process group size";
        }
    }

    use.plainLayers = programFact(m, "tuneup.ddp.batchnorm_layers");
    use.syncLayers = programFact(m, "tuneup.ddp.sync_batchnorm_layers");
    if (const auto batch = programFact(m, "tuneup.dataloader.batch_size"); batch && *batch > 0)
        use.loaderBatch = *batch;
    use.hasOps = !m.cpuOps.empty();
    use.readAnything = use.plainLayers || use.syncLayers || !m.cpuOps.empty() || !m.kernels.empty();

    // Operators.
    const auto& ops = m.cpuOps;
    std::unordered_map<StringId, BnOp> kindOf;
    auto kind = [&](size_t op) {
        auto [it, added] = kindOf.try_emplace(ops.name[op], BnOp::None);
        if (added) it->second = classifyOp(m.str(ops.name[op]));
        return it->second;
    };
    auto inside = [&](size_t op, BnOp outer) { // an ancestor is of that kind
        for (RowIndex p = ops.parent[op]; p != kNoRow; p = ops.parent[size_t(p)])
            if (kind(size_t(p)) == outer) return true;
        return false;
    };
    auto insideSync = [&](size_t op) { return inside(op, BnOp::SyncFunction); };
    size_t gatherCalls = 0, syncFunctionCalls = 0;
    std::unordered_set<size_t> callsWithBatch;
    for (size_t i = 0; i < ops.size(); ++i) {
        const BnOp k = kind(i);
        if (k == BnOp::None) continue;
        const RowIndex parent = ops.parent[i];
        const bool outermost = parent == kNoRow || kind(size_t(parent)) != k;
        switch (k) {
        case BnOp::Plain:
            if (insideSync(i) || inside(i, BnOp::OtherNorm)) break;
            if (const int64_t b = batchOf(m, i)) { // one batch per call: the first op of its chain with shapes
                size_t root = i;
                while (ops.parent[root] != kNoRow && kind(size_t(ops.parent[root])) == BnOp::Plain)
                    root = size_t(ops.parent[root]);
                if (callsWithBatch.insert(root).second) ++use.plainBatches[b];
            }
            if (!outermost) break;
            ++use.plainCalls;
            if (use.plainEvents.size() < 50) use.plainEvents.push_back({ EventTable::CpuOp, RowIndex(i) });
            break;
        case BnOp::SyncFunction:
            if (!outermost || m.str(ops.name[i]) != "SyncBatchNorm") break; // forward calls count
            ++syncFunctionCalls;
            if (use.syncEvents.size() < 50) use.syncEvents.push_back({ EventTable::CpuOp, RowIndex(i) });
            break;
        case BnOp::SyncStats:
            if (const int64_t b = batchOf(m, i)) ++use.syncBatches[b];
            break;
        case BnOp::SyncGather:
            if (outermost) ++gatherCalls;
            break;
        case BnOp::OtherNorm:
        case BnOp::None:
            break;
        }
    }
    use.syncCalls = syncFunctionCalls ? syncFunctionCalls : gatherCalls;
    use.commAttributed = syncFunctionCalls > 0;

    // Kernels: SyncBatchNorm's gather, and what its forward and backward launched on the network.
    const auto& k = m.kernels;
    size_t nativeStatistics = 0;
    std::unordered_map<StringId, BnKernel> kernelKind;
    for (size_t i = 0; i < k.size(); ++i) {
        auto [it, added] = kernelKind.try_emplace(k.name[i], BnKernel::None);
        if (added) it->second = classifyKernel(m.str(k.name[i]));
        const int64_t ns = k.endNs[i] - k.startNs[i];
        switch (it->second) {
        case BnKernel::PlainForward:
            ++use.plainKernels;
            break;
        case BnKernel::NativeStatistics:
            ++nativeStatistics;
            break;
        case BnKernel::SyncReduce:
            ++use.syncKernels;
            ++use.gatherKernels;
            use.gatherNs += ns;
            if (use.syncEvents.size() < 50 && syncFunctionCalls == 0)
                use.syncEvents.push_back({ EventTable::Kernel, RowIndex(i) });
            break;
        case BnKernel::None:
            if (syncFunctionCalls && k.cpuOp[i] != kNoRow && context.kernelClass(i) == KernelClass::Communication) {
                const size_t op = size_t(k.cpuOp[i]);
                if (kind(op) == BnOp::SyncFunction || insideSync(op)) {
                    ++use.commKernels;
                    use.commNs += ns;
                }
            }
            break;
        }
    }
    // ATen's statistics kernel is SyncBatchNorm's too: plain only where no SyncBatchNorm gather ran.
    if (use.syncKernels == 0) use.plainKernels += nativeStatistics;
    return use;
}

} // namespace tuneup::rules

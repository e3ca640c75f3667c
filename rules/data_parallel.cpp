// data-parallel: torch.nn.DataParallel (one process driving several GPUs) instead of
// DistributedDataParallel (one process per GPU). See data-parallel.md.

#include "advise/rule_context.h"
#include "all_rules.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace tuneup::rules {

using namespace analysis;

namespace {

// A GPU counts as driven when it runs at least this share of the process's kernel time.
constexpr double kMinDeviceShare = 0.02;
// Replicas run the same kernels: this share of a smaller device's kernels also ran on the busiest one.
constexpr double kReplicaOverlap = 0.8;
constexpr size_t kMinReplicaKernels = 20;

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// "DataParallel.forward" (the record_function in nn.DataParallel.forward), not DistributedDataParallel's.
bool isDataParallelForward(std::string_view name) {
    const size_t at = name.find("DataParallel.forward");
    return at != std::string_view::npos && (at == 0 || !std::isalpha(static_cast<unsigned char>(name[at - 1])));
}

// The autograd functions of torch/nn/parallel/_functions.py that nn.DataParallel runs every step: the
// module's replication (Broadcast, whose backward is ReduceAddCoalesced), seen by their autograd nodes
// ("BroadcastBackward", "autograd::engine::evaluate_function: ReduceAddCoalescedBackward"). Its Gather
// and Scatter are left out: their node names ("GatherBackward") are also those of torch.gather and
// torch.scatter in older PyTorch versions ("GatherBackward0" in newer ones).
bool isParallelFunction(std::string_view name) {
    constexpr std::string_view prefix = "autograd::engine::evaluate_function: ";
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
    for (std::string_view fn : { "Broadcast", "ReduceAddCoalesced" })
        if (name == fn || (name.starts_with(fn) && name.substr(fn.size()).starts_with("Backward"))) return true;
    return false;
}

// Python frames of nn.DataParallel's machinery (with_stack traces); DDP lives in distributed.py.
bool isDataParallelFrame(std::string_view name) {
    return contains(name, "torch/nn/parallel/data_parallel.py") || contains(name, "torch/nn/parallel/replicate.py")
        || contains(name, "torch/nn/parallel/scatter_gather.py")
        || contains(name, "torch/nn/parallel/parallel_apply.py");
}

struct DeviceUse {
    int32_t device = -1;
    int64_t busyNs = 0;
    size_t kernels = 0;
    std::unordered_map<StringId, size_t> names;
};

class DataParallel final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "data-parallel", "DataParallel instead of DDP",
            "One process drives several GPUs with torch.nn.DataParallel instead of one process per GPU with "
            "DistributedDataParallel.",
            { Input::GpuKernels } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const TraceModel& m = context.model();

        // Markers of nn.DataParallel (and of DDP, to explain a clean result).
        size_t dpForward = 0, parallelFns = 0, dpFrames = 0, ddpForward = 0;
        Evidence evidence;
        auto scanNames = [&](const auto& table, EventTable kind) {
            for (size_t i = 0; i < table.size(); ++i) {
                const std::string_view name = m.str(table.name[i]);
                if (contains(name, "DistributedDataParallel.forward")) ++ddpForward;
                const bool forward = isDataParallelForward(name), fn = isParallelFunction(name);
                dpForward += forward;
                parallelFns += fn;
                if ((forward || fn) && evidence.events.size() < 20) evidence.events.push_back({ kind, RowIndex(i) });
            }
        };
        scanNames(m.annotations, EventTable::Annotation);
        scanNames(m.cpuOps, EventTable::CpuOp);
        for (size_t i = 0; i < m.pythonFunctions.size(); ++i)
            dpFrames += isDataParallelFrame(m.str(m.pythonFunctions.name[i]));

        // GPUs this process launched work on.
        std::map<int32_t, DeviceUse> byDevice;
        int64_t totalNs = 0;
        for (size_t i = 0; i < m.kernels.size(); ++i) {
            DeviceUse& d = byDevice[m.kernels.device[i]];
            d.device = m.kernels.device[i];
            const int64_t ns = m.kernels.endNs[i] - m.kernels.startNs[i];
            d.busyNs += ns;
            ++d.kernels;
            ++d.names[m.kernels.name[i]];
            totalNs += ns;
        }
        std::vector<const DeviceUse*> used;
        for (const auto& [id, d] : byDevice)
            if (totalNs > 0 && double(d.busyNs) >= kMinDeviceShare * double(totalNs)) used.push_back(&d);
        std::sort(
            used.begin(), used.end(), [](const DeviceUse* a, const DeviceUse* b) { return a->busyNs > b->busyNs; });
        std::set<int64_t> launchingPids;
        for (size_t i = 0; i < m.kernels.size(); ++i)
            if (const RowIndex api = m.kernels.apiCall[i]; api != kNoRow)
                launchingPids.insert(m.threads[m.apiCalls.thread[size_t(api)]].pid);

        const bool markers = dpForward + parallelFns + dpFrames > 0;
        if (used.size() < 2) {
            if (markers)
                outcome.reason = "nn.DataParallel markers found (" + std::to_string(dpForward + parallelFns + dpFrames)
                    + "), but only one GPU ran kernels: the wrapper costs little here; on several GPUs use "
                      "DistributedDataParallel";
            else
                outcome.reason = "one GPU per process (" + std::to_string(byDevice.size()) + " device"
                    + (byDevice.size() == 1 ? "" : "s") + " with kernels)"
                    + (ddpForward ? "; DistributedDataParallel is used" : "");
            return;
        }
        if (launchingPids.size() > 1) {
            outcome.reason = "kernels on " + std::to_string(used.size()) + " GPUs, launched by "
                + std::to_string(launchingPids.size()) + " processes: one process per GPU";
            return;
        }

        // Replicas: the kernels of each other GPU also ran on the busiest one.
        const DeviceUse& main = *used.front();
        size_t replicas = 0;
        for (size_t u = 1; u < used.size(); ++u) {
            size_t shared = 0;
            for (const auto& [name, n] : used[u]->names) {
                auto it = main.names.find(name);
                shared += it == main.names.end() ? 0 : std::min(n, it->second);
            }
            if (used[u]->kernels >= kMinReplicaKernels && double(shared) >= kReplicaOverlap * double(used[u]->kernels))
                ++replicas;
        }
        if (!markers && replicas == 0) {
            outcome.reason = "one process drives " + std::to_string(used.size())
                + " GPUs, but with different kernels on each and no nn.DataParallel markers: model parallelism, "
                  "not data parallelism";
            return;
        }
        if (ddpForward > 0 && !markers) {
            outcome.reason = "one process drives " + std::to_string(used.size())
                + " GPUs under DistributedDataParallel (single-process multi-device mode)";
            return;
        }

        // DataParallel's own traffic on the busiest GPU each step: replicating the module (broadcast),
        // scattering inputs and gathering outputs (peer copies).
        int64_t trafficNs = 0;
        size_t copies = 0, broadcasts = 0;
        for (size_t i = 0; i < m.memcpys.size(); ++i) {
            // Peer copies only: device-to-device copies inside one GPU are ordinary tensor copies.
            if (m.memcpys.device[i] != main.device || m.memcpys.copyKind[i] != CopyKind::PtoP) continue;
            ++copies;
            trafficNs += m.memcpys.endNs[i] - m.memcpys.startNs[i];
        }
        for (size_t i = 0; i < m.kernels.size(); ++i) {
            if (m.kernels.device[i] != main.device || context.kernelClass(i) != KernelClass::Communication) continue;
            const std::string_view name = m.str(m.kernels.name[i]);
            if (!contains(name, "roadcast") && !contains(name, "Reduce") && !contains(name, "ather")) continue;
            ++broadcasts;
            trafficNs += m.kernels.endNs[i] - m.kernels.startNs[i];
        }
        int64_t othersNs = 0;
        for (size_t u = 1; u < used.size(); ++u)
            othersNs += used[u]->busyNs;
        const int64_t othersMean = othersNs / int64_t(used.size() - 1);
        const int64_t excessNs = std::max<int64_t>(0, main.busyNs - othersMean);
        const int64_t gainNs = context.perStep(trafficNs) + context.perStep(excessNs) / 2;
        Gain gain = context.gain(gainNs,
            "DDP does not replicate the module, scatter inputs or gather outputs each step: the "
                + formatDuration(context.perStep(trafficNs)) + " per step of broadcast and peer copies on GPU "
                + std::to_string(main.device)
                + ", plus half of the extra time that GPU is busy compared with the others (its loss, gathers and "
                  "optimizer work run there alone); GIL contention between the replica threads is not counted",
            "low");

        const int n = int(used.size());
        const double busiestShare = main.busyNs > 0 && othersMean > 0 ? double(main.busyNs) / double(othersMean) : 0.0;
        Finding f;
        f.severity = gain.stepShare >= 0.2 ? Severity::Error : Severity::Warning;
        f.title = "one process drives " + std::to_string(n) + " GPUs with nn.DataParallel; GPU "
            + std::to_string(main.device) + " is busy " + formatDuration(context.perStep(main.busyNs)) + " per step vs "
            + formatDuration(context.perStep(othersMean)) + " on the others: use DDP (torchrun --nproc-per-node "
            + std::to_string(n) + ")";
        f.detail = "Kernels ran on " + std::to_string(n) + " GPUs from one process"
            + (dpForward ? ", inside " + std::to_string(dpForward) + " DataParallel.forward ranges" : std::string())
            + (parallelFns ? ", with " + std::to_string(parallelFns)
                        + " torch.nn.parallel Broadcast/ReduceAddCoalesced operations (module replication)"
                           : std::string())
            + (replicas ? ", and " + std::to_string(replicas) + " GPU" + (replicas > 1 ? "s run" : " runs")
                        + " a replica of GPU " + std::to_string(main.device) + "'s kernels"
                        : std::string())
            + ". nn.DataParallel copies the module to every GPU each step, splits the batch, gathers the outputs on "
              "GPU "
            + std::to_string(main.device)
            + " and drives all replicas from threads of one Python process (GIL contention). "
              "DistributedDataParallel runs one process per GPU and overlaps the gradient all-reduce with backward; "
              "PyTorch recommends it even on a single machine.";
        evidence.facts = { { "GPUs driven by one process", std::to_string(n) },
            { "busiest GPU",
                std::to_string(main.device) + " (" + formatDuration(context.perStep(main.busyNs)) + " per step)" },
            { "mean of the other GPUs", formatDuration(context.perStep(othersMean)) + " per step" },
            { "DataParallel.forward ranges", std::to_string(dpForward) },
            { "torch.nn.parallel functions", std::to_string(parallelFns) },
            { "peer copies / broadcast kernels on GPU " + std::to_string(main.device),
                std::to_string(copies) + " / " + std::to_string(broadcasts) } };
        if (busiestShare > 0)
            evidence.facts.push_back(
                { "busiest GPU vs others", std::to_string(std::lround(busiestShare * 100)) + "%" });
        if (dpFrames) evidence.facts.push_back({ "torch/nn/parallel Python frames", std::to_string(dpFrames) });
        if (programFact(m, "tuneup.wrap.data_parallel").value_or(0))
            evidence.facts.push_back({ "model wrapped in torch.nn.DataParallel (recorded)", "yes" });
        evidence.eventsTotal = dpForward + parallelFns;
        f.evidence = std::move(evidence);
        f.gain = std::move(gain);
        const std::string nStr = std::to_string(n);
        f.fixPython = "# launch one process per GPU:\n"
                      "#   torchrun --nproc-per-node "
            + nStr
            + " train.py\n"
              "import os, torch, torch.distributed as dist\n"
              "from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "from torch.utils.data.distributed import DistributedSampler\n"
              "dist.init_process_group(\"nccl\")\n"
              "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
              "torch.cuda.set_device(local_rank)\n"
              "model = DDP(model.to(local_rank), device_ids=[local_rank])  # was: nn.DataParallel(model)\n"
              "sampler = DistributedSampler(dataset)\n"
              "loader = DataLoader(dataset, batch_size=batch_size // "
            + nStr
            + ", sampler=sampler,\n"
              "                    num_workers=4, pin_memory=True)  # per-process batch: old batch / "
            + nStr
            + "\n"
              "for epoch in range(epochs):\n"
              "    sampler.set_epoch(epoch)\n"
              "    for x, y in loader:\n"
              "        x, y = x.to(local_rank, non_blocking=True), y.to(local_rank, non_blocking=True)\n"
              "        ...  # forward, backward, optimizer.step() as before\n"
              "dist.destroy_process_group()";
        f.fixCpp = "// Replace torch::nn::parallel::data_parallel with one process per GPU (launch with\n"
                   "// torchrun --nproc-per-node "
            + nStr
            + " ./train, which sets RANK, WORLD_SIZE, LOCAL_RANK,\n"
              "// MASTER_ADDR and MASTER_PORT) and an NCCL all-reduce of the gradients.\n"
              "#include <torch/torch.h>\n"
              "#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>\n"
              "#include <torch/csrc/distributed/c10d/TCPStore.hpp>\n"
              "const int rank = std::stoi(std::getenv(\"RANK\")), world = std::stoi(std::getenv(\"WORLD_SIZE\"));\n"
              "const int local = std::stoi(std::getenv(\"LOCAL_RANK\"));\n"
              "c10d::TCPStoreOptions opts;\n"
              "opts.port = std::stoi(std::getenv(\"MASTER_PORT\"));\n"
              "opts.isServer = rank == 0;\n"
              "opts.numWorkers = world;\n"
              "auto store = c10::make_intrusive<c10d::TCPStore>(std::getenv(\"MASTER_ADDR\"), opts);\n"
              "auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world);\n"
              "torch::Device device(torch::kCUDA, local);\n"
              "model->to(device);\n"
              "torch::data::samplers::DistributedRandomSampler sampler(dataset.size().value(), world, rank);\n"
              "// each step, after loss.backward(): one all-reduce of all gradients, flattened\n"
              "std::vector<torch::Tensor> grads;\n"
              "for (auto& p : model->parameters()) grads.push_back(p.grad().view(-1));\n"
              "std::vector<torch::Tensor> flat{torch::cat(grads).div_(world)};\n"
              "pg->allreduce(flat)->wait();\n"
              "int64_t offset = 0;\n"
              "for (auto& p : model->parameters()) {\n"
              "    auto n = p.grad().numel();\n"
              "    p.grad().view(-1).copy_(flat[0].narrow(0, offset, n));\n"
              "    offset += n;\n"
              "}\n"
              "optimizer.step();";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeDataParallel() {
    return std::make_unique<DataParallel>();
}

} // namespace tuneup::rules

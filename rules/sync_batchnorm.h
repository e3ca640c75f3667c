#pragma once
// What sync-batchnorm-missing and sync-batchnorm-unneeded read from one rank: how many processes train
// together, the BatchNorm layers plain and synchronised, the per-GPU batch they normalise over, and what
// SyncBatchNorm's own work costs. From the Python bootstrap's facts where it recorded them, else from the
// trace's operators and kernels. See sync-batchnorm-missing.md.

#include "advise/rule_context.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tuneup::rules {

// Below this per-GPU batch, BatchNorm's statistics come from too few samples: Group Normalization (Wu & He
// 2018) measures BatchNorm's ImageNet error flat from 32 to 16 images per GPU, then growing at 8 and below.
inline constexpr int64_t kSmallPerGpuBatch = 16;
// From this per-GPU batch, each GPU's own statistics are enough: the reference large-batch ImageNet training
// (Goyal et al. 2017) computes BatchNorm per GPU over 32 images; SyncBatchNorm's all-gather and all-reduce
// then cost time for statistics no better than the local ones.
inline constexpr int64_t kLargePerGpuBatch = 32;

struct BatchNormUse {
    // Processes training together, and where that came from; unset when nothing says.
    std::optional<int64_t> worldSize;
    std::string worldFrom;
    // The bootstrap's facts on the model DistributedDataParallel wraps (tuneup.ddp.*_layers).
    std::optional<int64_t> plainLayers, syncLayers;
    // The trace: plain BatchNorm forward calls (the outermost aten batch_norm op of each), SyncBatchNorm's
    // synchronising forward calls (its autograd function "SyncBatchNorm", else its gather op).
    size_t plainCalls = 0, syncCalls = 0;
    // Kernels where the trace has no operators: cuDNN's and ATen's training-mode forward kernels, and
    // SyncBatchNorm's batch_norm_reduce_statistics_kernel (only batch_norm_gather_stats launches it).
    size_t plainKernels = 0, syncKernels = 0;
    // Per-GPU batch: the first dimension of the BatchNorm ops' input (the most common, with the calls of
    // each), else the DataLoader's batch size.
    std::map<int64_t, size_t> plainBatches, syncBatches;
    std::optional<int64_t> loaderBatch;
    // SyncBatchNorm's own work: its statistics gather kernels, and the communication kernels launched from
    // inside its forward and backward (the all-gather of the statistics, the all-reduce of the gradients'
    // sums), over the trace.
    int64_t gatherNs = 0, commNs = 0;
    size_t gatherKernels = 0, commKernels = 0;
    bool commAttributed = false; // SyncBatchNorm's autograd function ops are there to tie kernels to it
    std::vector<analysis::EventRef> plainEvents, syncEvents; // capped

    bool hasOps = false; // the trace has framework operators: they decide, kernels only where there are none
    bool readAnything = false; // operators, kernels or facts to read

    bool hasPlain() const { return plainLayers ? *plainLayers > 0 : hasOps ? plainCalls > 0 : plainKernels > 0; }
    bool hasSync() const { return syncLayers ? *syncLayers > 0 : hasOps ? syncCalls > 0 : syncKernels > 0; }
    // The per-GPU batch of plain (or synchronised) BatchNorm, and where it came from.
    std::optional<int64_t> batch(bool sync, std::string* from) const;
    // "2 BatchNorm layers (recorded)", "424 BatchNorm calls", "212 cuDNN BatchNorm kernels"
    std::string plainText() const;
    std::string syncText() const;
};

BatchNormUse readBatchNormUse(const analysis::RuleContext& context);

// What the rules read when they have nothing to read, for "not evaluated: needs ...".
inline constexpr const char* kNeedsBatchNorm
    = "needs framework operators (torch.profiler), GPU kernels, or the layers of the model DistributedDataParallel "
      "wraps (recorded by tuneup's Python bootstrap)";
inline constexpr const char* kNeedsBatch
    = "needs the per-GPU batch: operator input shapes (torch.profiler with record_shapes=True) or the DataLoader's "
      "batch size (recorded by tuneup's Python bootstrap)";
inline constexpr const char* kNeedsWorld
    = "needs the number of processes: the trace's distributed info (Kineto distributedInfo, WORLD_SIZE), the "
      "traces of two or more ranks, or the world size DistributedDataParallel ran with (tuneup's Python bootstrap)";

} // namespace tuneup::rules

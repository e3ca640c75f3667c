"""BatchNorm under DistributedDataParallel with a small batch per GPU: each process normalises over its own
8 samples, too few for good statistics. --fixed converts the BatchNorm layers to SyncBatchNorm
(torch.nn.SyncBatchNorm.convert_sync_batchnorm), whose statistics cover every process's samples. Launch it
with two or more processes:

    torchrun --nproc_per_node 2 sync_batchnorm.py            # BatchNorm, 8 samples per GPU
    torchrun --nproc_per_node 2 sync_batchnorm.py --fixed    # SyncBatchNorm
On CUDA each process takes its own GPU over NCCL when there are enough, else they share the GPUs over gloo.
Without a GPU the processes run DDP over gloo on the CPU, where SyncBatchNorm cannot run (DDP refuses it in a
model on the CPU): --fixed then converts the model, asks DDP to wrap it (tuneup's bootstrap records the
layers it was given), says so and stops before training."""

import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import sample

args = sample.parse(__doc__, batch=8, size=16, channels=32)
torch.manual_seed(0)
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29514")
rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
local_rank = int(os.environ.get("LOCAL_RANK", 0))
cuda = torch.cuda.is_available()
own_gpu = cuda and torch.cuda.device_count() >= world
dist.init_process_group("nccl" if own_gpu else "gloo", rank=rank, world_size=world)
device = torch.device("cuda", local_rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(device)

c = args.channels
model = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                      nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10))
if args.fixed:
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = model.to(device)

# Each process loads its own share: batch_size is the per-GPU batch that BatchNorm normalises over.
images = torch.randn(args.batch * world * args.steps, 3, args.size, args.size)
labels = torch.randint(0, 10, (len(images),))
dataset = TensorDataset(images, labels)
loader = DataLoader(dataset, batch_size=args.batch, sampler=DistributedSampler(dataset, world, rank))
batches = iter(loader)

try:
    model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
except ValueError as error:
    if cuda or not args.fixed:
        raise
    print("sync_batchnorm --fixed: %s (torch %s on the CPU): the model was converted to SyncBatchNorm and handed "
          "to DistributedDataParallel, which refused it; no training step runs (a GPU runs them)"
          % (error, torch.__version__), file=sys.stderr)
    dist.destroy_process_group()
    sys.exit(0)

optimizer = sample.sgd(model)


def step(_):
    inputs, targets = next(batches)
    sample.sgd_step(model, optimizer, inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True))


sample.train("sync_batchnorm", args, step)
dist.destroy_process_group()

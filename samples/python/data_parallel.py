"""nn.DataParallel instead of one process per GPU: one Python thread drives every GPU, replicating the
model and scattering and gathering through GPU 0 each step. --fixed is DistributedDataParallel, one
process per device; launch it with torchrun:

    python3 data_parallel.py                                     # DataParallel over all GPUs
    torchrun --nproc-per-node 2 data_parallel.py --fixed         # DDP (also runs alone, as one process)
Without a GPU both run on the CPU (DDP over gloo)."""

import os

import torch
import torch.distributed as dist

import sample

args = sample.parse(__doc__, batch=256)
torch.manual_seed(0)
cuda = torch.cuda.is_available()
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048),
                            torch.nn.ReLU(), torch.nn.Linear(2048, 10))
if args.fixed:
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    model = torch.nn.parallel.DistributedDataParallel(model.to(device), device_ids=[local_rank] if cuda else None)
    batch = args.batch // world
else:
    device = sample.device()
    model = torch.nn.DataParallel(model.to(device))
    batch = args.batch
optimizer = sample.sgd(model)
inputs = torch.randn(batch, 1024, device=device)
targets = torch.randint(0, 10, (batch,), device=device)
sample.train("data_parallel", args, lambda _: sample.sgd_step(model, optimizer, inputs, targets))
if args.fixed:
    dist.destroy_process_group()

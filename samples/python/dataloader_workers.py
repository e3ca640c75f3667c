"""A slow dataset loaded in the main process: every sample takes --load-ms to make (decoding,
augmentation) and with num_workers=0 the loop waits for each batch. --fixed loads it with 4 worker
processes, pinned memory and persistent workers."""

import time

import torch
from torch.utils.data import DataLoader, Dataset

import sample


class SlowDataset(Dataset):
    def __init__(self, size, load_ms):
        self.size, self.load_ms = size, load_ms

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        time.sleep(self.load_ms / 1000.0)
        generator = torch.Generator().manual_seed(index)
        return torch.randn(512, generator=generator), index % 10


args = sample.parse(__doc__, batch=8, load_ms=0.2, workers=4)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                            torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(device)
optimizer = sample.sgd(model)
cuda = device.type == "cuda"
dataset = SlowDataset(args.steps * args.batch, args.load_ms)
if args.fixed:
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers, pin_memory=cuda,
                        persistent_workers=True)
else:
    loader = DataLoader(dataset, batch_size=args.batch)
batches = iter(loader)


def step(_):
    inputs, targets = next(batches)
    sample.sgd_step(model, optimizer, inputs.to(device, non_blocking=cuda), targets.to(device, non_blocking=cuda))


sample.train("dataloader_workers", args, step)

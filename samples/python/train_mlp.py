"""A small PyTorch training loop with a slow dataset, for tuneup's tests and demos.

    python3 train_mlp.py [--steps N] [--workers W] [--set-to-none 0|1] [--anomaly] [--cudnn-benchmark]
                         [--data-parallel]

Runs on CUDA when there is a GPU, else on the CPU. Each batch takes --load-ms to make (a slow
dataset), so --workers 0 stalls the loop and --workers 4 hides it.
"""

import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __init__(self, size, load_ms):
        self.size, self.load_ms = size, load_ms

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        time.sleep(self.load_ms / 1000.0)
        generator = torch.Generator().manual_seed(index)
        return torch.randn(128, generator=generator), index % 10


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--load-ms", type=float, default=1.0, help="time to make one sample")
    parser.add_argument("--set-to-none", type=int, choices=(0, 1), default=1)
    parser.add_argument("--anomaly", action="store_true")
    parser.add_argument("--cudnn-benchmark", action="store_true")
    parser.add_argument("--data-parallel", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.autograd.set_detect_anomaly(args.anomaly)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
    if args.data_parallel:
        model = torch.nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = DataLoader(SlowDataset(args.steps * args.batch, args.load_ms), batch_size=args.batch,
                        num_workers=args.workers, pin_memory=device.type == "cuda")
    loss = torch.zeros(())
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=bool(args.set_to_none))
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print("trained %d steps on %s, final loss %.4f" % (len(loader), device.type, loss.item()))


if __name__ == "__main__":
    main()

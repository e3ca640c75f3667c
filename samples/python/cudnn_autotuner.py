"""cuDNN autotuner off: a small CNN on fixed-size images trained with torch.backends.cudnn.benchmark
off, so cuDNN picks each convolution's algorithm by heuristics. --fixed turns the autotuner on."""

import torch

import sample

args = sample.parse(__doc__, batch=16)
torch.backends.cudnn.benchmark = args.fixed
torch.manual_seed(0)
device = sample.device()
nn = torch.nn
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(device)
optimizer = sample.sgd(model)
images = torch.randn(args.batch, 3, 32, 32, device=device)
labels = torch.randint(0, 10, (args.batch,), device=device)
sample.train("cudnn_autotuner", args, lambda _: sample.sgd_step(model, optimizer, images, labels))

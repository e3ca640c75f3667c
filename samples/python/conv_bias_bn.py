"""Convolution bias followed by BatchNorm: BatchNorm subtracts the channel mean, so a convolution's
bias just before it is cancelled, yet costs work and a gradient every step. --fixed builds the
convolutions with bias=False."""

import torch

import sample

args = sample.parse(__doc__, batch=16)
torch.manual_seed(0)
device = sample.device()
nn = torch.nn
bias = not args.fixed
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=bias), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.Conv2d(32, 64, 3, padding=1, bias=bias), nn.BatchNorm2d(64), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(device)
optimizer = sample.sgd(model)
images = torch.randn(args.batch, 3, 32, 32, device=device)
labels = torch.randint(0, 10, (args.batch,), device=device)
sample.train("conv_bias_bn", args, lambda _: sample.sgd_step(model, optimizer, images, labels))

"""DataLoader workers that make each batch quickly, but as many small Python objects (a dict per
record, --objects of them per sample): the main process unpickles every one of them inside next(), so
the loop waits while its own thread runs and the workers idle; more workers would not help. --fixed
makes each sample one contiguous tensor, which crosses to the main process in shared memory."""

import torch
from torch.utils.data import DataLoader, Dataset

import sample


class RecordDataset(Dataset):
    """Samples made once, up front (the workers inherit them), so that making a batch costs the
    workers almost nothing and receiving it is the main process's work."""

    def __init__(self, size, objects, as_tensor):
        self.size = size
        generator = torch.Generator().manual_seed(0)
        values = torch.randn(objects, generator=generator)
        self.tensor = values
        self.records = [{"id": j, "value": float(v)} for j, v in enumerate(values.tolist())]
        self.as_tensor = as_tensor

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return (self.tensor if self.as_tensor else self.records), index % 10


def keep_records(batch):
    """Collates in the worker without making tensors: the records stay Python objects."""
    return [records for records, _ in batch], torch.tensor([target for _, target in batch])


def features(records, width):
    """The first `width` values of each sample's records, as the model's input."""
    return torch.tensor([[r["value"] for r in sample_records[:width]] for sample_records in records])


args = sample.parse(__doc__, batch=4, objects=20000, workers=2, hidden=1024)
torch.manual_seed(0)
device = sample.device()
width = min(64, args.objects)
model = torch.nn.Sequential(torch.nn.Linear(width, args.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(args.hidden, 10)).to(device)
optimizer = sample.sgd(model)
dataset = RecordDataset(args.steps * args.batch, args.objects, args.fixed)
if args.fixed:
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers, persistent_workers=True)
else:
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers, persistent_workers=True,
                        collate_fn=keep_records)
batches = iter(loader)


def step(_):
    data, targets = next(batches)
    inputs = data[:, :width] if args.fixed else features(data, width)
    sample.sgd_step(model, optimizer, inputs.to(device), targets.to(device))


sample.train("dataloader_receive", args, step)

#!/usr/bin/python3
"""The anchor for examples/libtorch/train_cnn: the same network, loss, optimiser, batch
size and crop size, fed by PyTorch's DataLoader the way a Python user would write it
(ImageFolder + PIL, RandomResizedCrop + flip + ToTensor + Normalize, DistributedSampler,
2 worker processes).

  /usr/bin/python3 torch_cnn_train.py --folder IMAGE_FOLDER [--epochs 2] [--batch-size 64] [--size 112]

Prints one JSON line with the fields train_cnn prints: images/s over the steps after
the first, and the share of that time spent waiting for data."""
import argparse, json, time
import torch, torchvision
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms as T


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.fc(x.mean((2, 3)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", required=True)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--size", type=int, default=112)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.05)
    a = ap.parse_args()
    torch.manual_seed(1)
    tf = T.Compose([T.RandomResizedCrop(a.size), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = torchvision.datasets.ImageFolder(a.folder, transform=tf)
    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=1)
    dl = DataLoader(ds, batch_size=a.batch_size, sampler=sampler, num_workers=a.workers,
                    drop_last=False, persistent_workers=a.workers > 0)
    net = Net(len(ds.classes))
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=0.9)
    step, images, wait, t0 = 0, 0, 0.0, None
    for epoch in range(a.epochs):
        sampler.set_epoch(epoch)
        it = iter(dl)
        while True:
            w0 = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            if step > 0:
                wait += time.perf_counter() - w0
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            loss.item()
            if step == 0:
                t0 = time.perf_counter()
            else:
                images += x.shape[0]
            step += 1
    secs = time.perf_counter() - t0
    print(json.dumps({"steps": step, "images_per_s": images / secs, "data_wait_share": wait / secs,
                      "final_loss": loss.item(), "torch_threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()

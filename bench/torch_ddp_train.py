#!/usr/bin/python3
"""The PyTorch anchor for `evenfeed train`: the same image MLP (3*S*S -> H -> H -> C,
ReLU), the same optimiser (SGD, momentum 0.9, warm-up then cosine), the same per-rank
batch, trained with DistributedDataParallel (gloo) on N CPU processes, fed by
DataLoader + DistributedSampler over the same JPEGs (ImageFolder, RandomResizedCrop,
flip, normalise). Prints one JSON line: samples/s over the timed epochs (all but the
first) and the held-out accuracy.

    /usr/bin/python3 bench/torch_ddp_train.py IMAGE_FOLDER --eval HELDOUT --ranks 2

With `--device cuda` each rank trains on its own GPU (rank r on GPU r, NCCL instead of
gloo), the DataLoader pins its batches and the copies are asynchronous: PyTorch's usual
GPU recipe, the anchor for `evenfeed train --device gpu` (bench/gpu_train_vs_torch.sh).
"""
import argparse, json, math, os, queue, sys, time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def model_of(size, hidden, classes):
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * size * size, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))


def run(rank, a, out):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    cuda = a.device == "cuda"
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=a.ranks)
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    torch.set_num_threads(a.compute_threads)
    torch.manual_seed(a.seed)
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(a.size), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    data = datasets.ImageFolder(a.folder, train_tf)
    sampler = DistributedSampler(data, num_replicas=a.ranks, rank=rank, seed=a.seed)
    loader = DataLoader(data, batch_size=a.batch_size, sampler=sampler, num_workers=a.workers,
                        persistent_workers=a.workers > 0, prefetch_factor=4 if a.workers > 0 else None,
                        pin_memory=cuda)
    model = nn.parallel.DistributedDataParallel(model_of(a.size, a.hidden, len(data.classes)).to(device),
                                                device_ids=[rank] if cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    steps = a.epochs * len(loader)
    warm = int(0.05 * steps)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * min(1, (s - warm) / max(1, steps - warm)))))
    loss_fn = nn.CrossEntropyLoss()
    timed_samples, timed_seconds, run_start = 0, 0.0, time.perf_counter()
    for epoch in range(a.epochs):
        sampler.set_epoch(epoch)
        dist.barrier()
        start, samples = time.perf_counter(), 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
            sched.step()
            samples += len(y)
        if cuda:
            torch.cuda.synchronize()
        dist.barrier()
        if rank == 0:  # progress, so a slow or stuck run shows where it is
            print(f"epoch {epoch}: {samples} samples on rank 0 in {time.perf_counter() - start:.2f} s", file=sys.stderr, flush=True)
        if epoch > 0:
            timed_seconds += time.perf_counter() - start
            timed_samples += samples
    run_seconds = time.perf_counter() - run_start
    total = torch.tensor([float(timed_samples), float(len(sampler) * a.epochs)], device=device)
    dist.all_reduce(total)
    accuracy = -1.0
    if a.eval and rank == 0:
        eval_tf = transforms.Compose([transforms.Resize(a.size), transforms.CenterCrop(a.size), transforms.ToTensor(), norm])
        correct = n = 0
        with torch.no_grad():
            for x, y in DataLoader(datasets.ImageFolder(a.eval, eval_tf), batch_size=256, num_workers=a.workers):
                correct += (model.module(x.to(device)).argmax(1).cpu() == y).sum().item()
                n += len(y)
        accuracy = correct / n
    if rank == 0:
        # samples_per_sec: the epochs after the first; all_epochs_samples_per_sec: the whole
        # run, the first epoch's worker start-up included (as evenfeed's own summary counts).
        out.put({"anchor": "torch_ddp_nccl" if cuda else "torch_ddp_gloo", "ranks": a.ranks,
                 "samples_per_sec": total[0].item() / timed_seconds,
                 "all_epochs_samples_per_sec": total[1].item() / run_seconds,
                 "timed_epochs": a.epochs - 1, "eval_accuracy": accuracy, "torch": torch.__version__})
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("--eval", default="")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--workers", type=int, default=1, help="DataLoader workers per rank")
    p.add_argument("--compute-threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: rank r on GPU r, NCCL")
    a = p.parse_args()
    if a.ranks == 1:  # one process: no spawn, and a signal reaches the process that trains
        out = queue.Queue()
        run(0, a, out)
    else:
        out = mp.get_context("spawn").Queue()
        mp.spawn(run, args=(a, out), nprocs=a.ranks, join=True)
    print(json.dumps(out.get()))


if __name__ == "__main__":
    main()

// train_cnn: a small convolutional network trained with libtorch, fed by evenfeed.
//
//   train_cnn --data DIR [--epochs 2] [--steps N] [--batch-size 32] [--size 64]
//   mpirun -np 2 train_cnn --data DIR      (data parallel over evenfeed's communicator)
//
// What it shows a trainer author: the loader writes normalised float32 NCHW batches
// straight into its pool slots, and each batch becomes a tensor over that memory with
// torch::from_blob: no copy. The tensor owns the batch, so the slot goes back to the
// loader's pool only when the step no longer uses it. Padding slots (the epoch's last
// global batch) carry zero weight, and the loss is divided by the samples of every
// rank together, so the summed gradients are the gradient of the global mean.
//
// Prints "step S epoch E loss L" per step, then one JSON line: images/s (steps after
// the first), the share of time spent waiting for data, and a checksum of the weights
// (equal on every rank when data parallelism is right).
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>

#include "loader/dataset.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"
#include "trainer/mpi_communicator.h"
#include "trainer/mpi_runtime.h"

namespace {

struct Options {
  std::string data;
  int epochs = 2, batch_size = 32, size = 64, threads = 0;
  int64_t max_steps = 0;  // 0: every step of every epoch
  double lr = 0.05;
  uint64_t seed = 1;
};

// Three stride-2 convolutions, global average pooling, one linear layer.
struct NetImpl : torch::nn::Module {
  explicit NetImpl(int64_t classes)
      : conv1(register_module("conv1", torch::nn::Conv2d(conv(3, 16)))),
        conv2(register_module("conv2", torch::nn::Conv2d(conv(16, 32)))),
        conv3(register_module("conv3", torch::nn::Conv2d(conv(32, 64)))),
        fc(register_module("fc", torch::nn::Linear(64, classes))) {}

  static torch::nn::Conv2dOptions conv(int64_t in, int64_t out) {
    return torch::nn::Conv2dOptions(in, out, 3).stride(2).padding(1);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1(x));
    x = torch::relu(conv2(x));
    x = torch::relu(conv3(x));
    return fc(x.mean({2, 3}));
  }

  torch::nn::Conv2d conv1, conv2, conv3;
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// [snippet:from_blob]
// The batch's images as an N x 3 x S x S tensor over the batch's own memory. The
// deleter holds the batch: its slot returns to the pool when the last tensor that
// views it (including autograd's saved inputs) is gone.
torch::Tensor images_tensor(const std::shared_ptr<evenfeed::Batch>& batch, int size) {
  auto* pixels = const_cast<float*>(batch->images_float());
  const auto n = static_cast<int64_t>(batch->size());
  return torch::from_blob(
      pixels, {n, 3, size, size}, [batch](void*) {}, torch::kFloat32);
}
// [/snippet]

// 1 for real samples, 0 for padding slots.
torch::Tensor sample_weights(const evenfeed::Batch& batch) {
  if (batch.valid().empty()) return torch::ones({static_cast<int64_t>(batch.size())});
  auto flags = torch::from_blob(const_cast<uint8_t*>(batch.valid().data()),
                                {static_cast<int64_t>(batch.size())}, torch::kUInt8);
  return flags.to(torch::kFloat32);
}

// Every rank starts from rank 0's weights.
void broadcast_parameters(Net& net, evenfeed::Communicator& comm) {
  for (auto& p : net->parameters()) {
    torch::NoGradGuard no_grad;
    comm.broadcast(p.data_ptr(), p.numel() * sizeof(float), {})->wait();
  }
}

// Sums every parameter's gradient over the ranks; all are issued before any is waited
// for, so they travel together.
void all_reduce_gradients(Net& net, evenfeed::Communicator& comm) {
  std::vector<std::unique_ptr<evenfeed::Work>> in_flight;
  for (auto& p : net->parameters())
    in_flight.push_back(comm.all_reduce(p.grad().data_ptr(), p.grad().numel(), {}));
  for (auto& work : in_flight) work->wait();
}

double weight_checksum(Net& net) {
  double sum = 0;
  for (const auto& p : net->parameters()) sum += p.to(torch::kFloat64).abs().sum().item<double>();
  return sum;
}

int run(const Options& o) {
  evenfeed::MpiRuntime mpi;
  auto comm = evenfeed::make_host_communicator(mpi.world_size());
  const auto rank = static_cast<uint32_t>(comm->rank());
  const auto world = static_cast<uint32_t>(comm->world_size());

  evenfeed::Dataset dataset(o.data);
  evenfeed::LoaderOptions loader_options;
  loader_options.seed = o.seed;
  loader_options.threads = o.threads;
  loader_options.image.size = o.size;
  loader_options.image.layout = evenfeed::ImageLayout::kFloat32NCHW;  // normalised here
  evenfeed::SamplerOptions sampler;
  sampler.batch_size = static_cast<uint64_t>(o.batch_size);

  torch::manual_seed(static_cast<uint64_t>(o.seed));
  Net net(static_cast<int64_t>(dataset.manifest().classes.size()));
  broadcast_parameters(net, *comm);
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(o.lr).momentum(0.9));

  using Clock = std::chrono::steady_clock;
  int64_t step = 0, timed_images = 0;
  double wait_seconds = 0;
  Clock::time_point timed_from;
  for (uint32_t epoch = 0; epoch < static_cast<uint32_t>(o.epochs); ++epoch) {
    evenfeed::DistributedSampler plan(dataset.size(), world, sampler, {o.seed, epoch, {}});
    evenfeed::Loader loader(dataset, loader_options, epoch, evenfeed::batches_of_rank(plan, rank));
    while (o.max_steps == 0 || step < o.max_steps) {
      const auto wait_start = Clock::now();
      auto next = loader.next();
      if (step > 0)
        wait_seconds += std::chrono::duration<double>(Clock::now() - wait_start).count();
      if (!next) break;
      auto batch = std::make_shared<evenfeed::Batch>(std::move(*next));

      torch::Tensor images = images_tensor(batch, o.size);
      torch::Tensor labels = torch::from_blob(const_cast<int32_t*>(batch->labels().data()),
                                              {static_cast<int64_t>(batch->size())}, torch::kInt32)
                                 .to(torch::kLong);
      torch::Tensor weights = sample_weights(*batch);
      float global_count = weights.sum().item<float>();
      comm->all_reduce(&global_count, 1, {})->wait();

      optimizer.zero_grad();
      torch::Tensor per_sample = torch::nn::functional::cross_entropy(
          net->forward(images), labels,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
      torch::Tensor loss = (per_sample * weights).sum() / global_count;
      loss.backward();
      all_reduce_gradients(net, *comm);
      optimizer.step();

      float global_loss = loss.item<float>();
      comm->all_reduce(&global_loss, 1, {})->wait();
      if (rank == 0)
        std::printf("step %lld epoch %u loss %.5f\n", static_cast<long long>(step), epoch,
                    global_loss);
      if (step == 0)
        timed_from = Clock::now();
      else
        timed_images += static_cast<int64_t>(batch->size());
      ++step;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - timed_from).count();
  std::printf(
      "{\"rank\": %u, \"world_size\": %u, \"steps\": %lld, \"images_per_s\": %.1f, "
      "\"data_wait_share\": %.3f, \"weight_checksum\": %.9g}\n",
      rank, world, static_cast<long long>(step), static_cast<double>(timed_images) / seconds,
      wait_seconds / seconds, weight_checksum(net));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"train_cnn: a small CNN in libtorch, fed by evenfeed"};
  app.add_option("--data", o.data, "evenfeed image dataset directory")->required();
  app.add_option("--epochs", o.epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--steps", o.max_steps, "stop after this many steps (0: all)");
  app.add_option("--batch-size", o.batch_size, "images per rank per step")
      ->check(CLI::PositiveNumber);
  app.add_option("--size", o.size, "crop size in pixels")->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "SGD learning rate (momentum 0.9)");
  app.add_option("--threads", o.threads, "loader threads (0: every core)");
  app.add_option("--seed", o.seed, "sampling, augmentation and initialisation seed");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_cnn: error: %s\n", e.what());
    return 1;
  }
}

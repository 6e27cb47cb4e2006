#include "docs/snippets/snippets.h"
#include "loader/loader.h"
#include "trainer/mpi_communicator.h"
#include "trainer/mpi_runtime.h"

namespace snippets {

// [snippet:ddp]
double ddp_epoch(const evenfeed::Dataset& dataset, uint32_t epoch) {
  evenfeed::MpiRuntime mpi;  // MPI_Init under mpirun or srun; a world of one otherwise
  auto comm = evenfeed::make_host_communicator(mpi.world_size());
  const auto rank = static_cast<uint32_t>(comm->rank());
  const auto world = static_cast<uint32_t>(comm->world_size());

  // Every rank computes the same plan and takes its own share: no messages needed.
  auto plan = plan_epoch(dataset, world, {/*seed=*/7, epoch, {}});
  evenfeed::LoaderOptions options;
  options.image.size = 32;
  evenfeed::Loader loader(dataset, options, epoch, evenfeed::batches_of_rank(*plan, rank));

  // Ranks may hold different numbers of real samples (token budgets, padding), so sum
  // over samples and divide by the global count, never average per rank.
  double totals[2] = {0, 0};  // sum of the per-sample value, samples
  while (auto batch = loader.next()) {
    double sums[2] = {0, 0};
    for (size_t i = 0; i < batch->size(); ++i) {
      if (!batch->valid().empty() && !batch->valid()[i]) continue;
      sums[0] += batch->labels()[i];  // stands in for a per-sample loss or gradient
      sums[1] += 1;
    }
    evenfeed::AllReduceOptions sum;
    sum.type = evenfeed::DataType::kFloat32;
    float exchange[2] = {static_cast<float>(sums[0]), static_cast<float>(sums[1])};
    comm->all_reduce(exchange, 2, sum)->wait();  // throws on a timeout: no endless wait
    totals[0] += exchange[0];
    totals[1] += exchange[1];
  }
  return totals[0] / totals[1];
}
// [/snippet]

}  // namespace snippets

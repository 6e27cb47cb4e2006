// The process's place in the job: MPI when a launcher started us (mpirun, srun), a
// world of one otherwise, so `evenfeed train` and `evenfeed doctor` run the same with
// or without a launcher. Initialises MPI with MPI_THREAD_SERIALIZED (the communicator
// makes its calls from its own thread) and finalises it on destruction.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace evenfeed {

// True when environment variables of a launcher (Open MPI, PMI/PMIx, Slurm) say this
// process is one rank of a job started by it.
bool launched_by_mpi();

class MpiRuntime {
 public:
  // Initialises MPI when launched_by_mpi() (or `force`), otherwise stays a world of one.
  explicit MpiRuntime(bool force = false);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  bool active() const { return active_; }  // MPI initialised by us
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // Rank and count of the ranks on this host (MPI_Comm_split_type SHARED).
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }
  // Every rank's host name, in rank order.
  const std::vector<std::string>& hosts() const { return hosts_; }
  // "Open MPI v4.1.4, ..." or "none (single process)".
  std::string library_version() const;

  // Ends the whole job after a fatal error on this rank, so no peer waits on it:
  // MPI_Abort under a launcher, exit otherwise. Never returns.
  [[noreturn]] void abort(int exit_code) const;

 private:
  bool active_ = false;
  int rank_ = 0, world_size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  std::vector<std::string> hosts_;
};

}  // namespace evenfeed

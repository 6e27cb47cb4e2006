// The injectable read layer (loader/read_env.h): reads that fail, come back short, or
// come back with a flipped bit at chosen samples. Under the fail policy the loader
// stops with an error naming the sample; under the substitute policy every rank (one
// thread per rank here, each with its own dataset and loader, as in a job) still gets
// the same number of equal-sized batches, and only the damaged samples are replaced.
#include "loader/read_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

constexpr uint32_t kWorld = 2;

struct RankRun {
  std::vector<size_t> batch_sizes;
  std::vector<uint64_t> ids;    // as delivered, substitutes included
  std::set<uint64_t> replaced;  // the damaged samples the loader replaced
  std::string error;            // empty when the epoch completed
};

RankRun run_rank(const fs::path& dir, ReadEnv& env, uint32_t rank, BadRecordPolicy policy) {
  RankRun run;
  Dataset dataset(dir, env);
  SamplerOptions sampler;
  sampler.batch_size = 4;
  DistributedSampler plan(dataset.size(), kWorld, sampler, {5, 0, {}});
  LoaderOptions o;
  o.image.size = 24;
  o.threads = 1;
  o.seed = 5;
  o.on_bad = policy;
  o.verify_checksums = true;  // a flipped payload bit is caught only by the checksum
  Loader loader(dataset, o, 0, batches_of_rank(plan, rank));
  try {
    while (auto batch = loader.next()) {
      run.batch_sizes.push_back(batch->size());
      run.ids.insert(run.ids.end(), batch->sample_ids().begin(), batch->sample_ids().end());
      for (const auto& [position, original] : batch->substitutions()) run.replaced.insert(original);
    }
  } catch (const Error& e) {
    run.error = e.what();
  }
  return run;
}

// One thread per rank, each reading through its own environment.
std::vector<RankRun> run_ranks(const fs::path& dir, std::vector<ReadEnv*> envs,
                               BadRecordPolicy policy) {
  std::vector<RankRun> runs(kWorld);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < kWorld; ++r)
    threads.emplace_back([&, r] { runs[r] = run_rank(dir, *envs[r], r, policy); });
  for (auto& t : threads) t.join();
  return runs;
}

class ReadFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::make_image_tree(tmp_ / "src", 2, 12);
    convert_images(tmp_ / "src", tmp_ / "data", {});
    clean_ = run_ranks(dir(), {&default_read_env(), &default_read_env()}, BadRecordPolicy::kFail);
    for (const auto& run : clean_) ASSERT_EQ(run.error, "");
  }
  fs::path dir() const { return tmp_ / "data"; }

  testing::TempDir tmp_;
  std::vector<RankRun> clean_;
};

TEST_F(ReadFaults, EveryKindOfDamageIsNamedUnderTheFailPolicy) {
  const uint64_t victim = clean_[0].ids[5];
  const std::vector<std::pair<ReadFaultRule, std::string>> cases = {
      {{victim, ReadFault::kFail, 0}, "injected read failure"},
      {{victim, ReadFault::kShort, 40}, "payload bytes but the record holds 8"},
      {{victim, ReadFault::kShort, 10}, "header"},       // even the header cut
      {{victim, ReadFault::kFlipBit, 0}, "magic"},       // header damaged
      {{victim, ReadFault::kFlipBit, 300}, "checksum"},  // payload damaged
  };
  for (const auto& [rule, expected] : cases) {
    FaultyReadEnv env({rule});
    RankRun run = run_rank(dir(), env, 0, BadRecordPolicy::kFail);
    EXPECT_NE(run.error.find("sample " + std::to_string(victim)), std::string::npos) << run.error;
    EXPECT_NE(run.error.find(expected), std::string::npos) << run.error;
    EXPECT_GE(env.faults_served(), 1u);
  }
}

TEST_F(ReadFaults, SubstitutesKeepEveryRankInStepAndReplaceOnlyTheDamaged) {
  const std::set<uint64_t> damaged0 = {clean_[0].ids[1], clean_[0].ids[6], clean_[0].ids[9]};
  const std::set<uint64_t> damaged1 = {clean_[1].ids[3]};
  FaultyReadEnv env0({{clean_[0].ids[1], ReadFault::kFail, 0},
                      {clean_[0].ids[6], ReadFault::kShort, 100},
                      {clean_[0].ids[9], ReadFault::kFlipBit, 500}});
  FaultyReadEnv env1({{clean_[1].ids[3], ReadFault::kFlipBit, 2}});
  auto runs = run_ranks(dir(), {&env0, &env1}, BadRecordPolicy::kSubstitute);

  for (uint32_t r = 0; r < kWorld; ++r) {
    ASSERT_EQ(runs[r].error, "") << "rank " << r;
    // Same steps and batch sizes as the undamaged epoch, on every rank.
    EXPECT_EQ(runs[r].batch_sizes, clean_[r].batch_sizes) << "rank " << r;
    ASSERT_EQ(runs[r].ids.size(), clean_[r].ids.size());
    for (size_t i = 0; i < runs[r].ids.size(); ++i) {
      const uint64_t planned = clean_[r].ids[i];
      const bool was_damaged = (r == 0 ? damaged0 : damaged1).count(planned) > 0;
      if (was_damaged) {
        EXPECT_NE(runs[r].ids[i], planned) << "rank " << r << " position " << i;
      } else {
        EXPECT_EQ(runs[r].ids[i], planned) << "rank " << r << " position " << i;
      }
    }
  }
  EXPECT_EQ(runs[0].replaced, damaged0);
  EXPECT_EQ(runs[1].replaced, damaged1);
}

}  // namespace
}  // namespace evenfeed

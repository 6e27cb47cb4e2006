// What both engines share: building the model by name, and what the loop records
// about a host batch (its samples, tokens and padding).
#include "trainer/compute_engine.h"

#include "core/error.h"

namespace evenfeed {

void describe_batch(const Batch& batch, bool tokens, PreparedBatch& prepared) {
  prepared.sample_ids.assign(batch.sample_ids().begin(), batch.sample_ids().end());
  prepared.valid.assign(batch.valid().begin(), batch.valid().end());
  double real = 0, cells = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const bool valid = batch.valid().empty() || batch.valid()[i] != 0;
    if (tokens) {
      real += valid ? batch.lengths()[i] : 0;
      cells += batch.max_length();
    } else {
      real += valid ? 1 : 0;
      cells += 1;
    }
  }
  prepared.tokens = real;
  prepared.padding = cells - real;
}

}  // namespace evenfeed

// What both engines share: the tokens and padding the loop records about a host batch.
#include "trainer/compute_engine.h"

namespace evenfeed {

std::pair<double, double> tokens_and_padding(const Batch& batch, bool tokens) {
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
  return {real, cells - real};
}

}  // namespace evenfeed

#include "docs/snippets/snippets.h"

namespace snippets {

// [snippet:resume]
// The plan's whole state is a few integers: seed, epoch and the steps served so far
// (at each world size). Store it with your checkpoint...
std::string save_state(const evenfeed::PlanState& state) {
  return state.to_json();
}

// ...and rebuild the plan from it: the restored planner serves exactly the steps not
// yet served, at the same or another world size, and the loader's crops and flips
// are the ones an uninterrupted run would have drawn.
evenfeed::PlanState restore_state(const std::string& text) {
  return evenfeed::PlanState::from_json(text);
}
// [/snippet]

}  // namespace snippets

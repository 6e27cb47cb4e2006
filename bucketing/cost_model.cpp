#include "bucketing/cost_model.h"

#include "core/error.h"

namespace evenfeed {

CostKind parse_cost_kind(const std::string& name) {
  if (name == "linear") return CostKind::kLinear;
  if (name == "quadratic") return CostKind::kQuadratic;
  fail("unknown cost model '{}'; use linear or quadratic", name);
}

const char* cost_kind_name(CostKind kind) {
  return kind == CostKind::kLinear ? "linear" : "quadratic";
}

}  // namespace evenfeed

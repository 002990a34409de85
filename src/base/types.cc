#include "strata/types.h"

#include <string>

namespace strata {

Result<Metric> ParseMetric(std::string_view name) {
  if (name == "l2" || name == "L2") return Metric::kL2;
  if (name == "ip" || name == "mips" || name == "inner_product") return Metric::kInnerProduct;
  if (name == "cosine" || name == "cos") return Metric::kCosine;
  return Status::InvalidArgument("unknown metric '" + std::string(name) +
                                 "' (expected l2, ip or cosine)");
}

std::string_view MetricName(Metric metric) {
  switch (metric) {
    case Metric::kL2: return "l2";
    case Metric::kInnerProduct: return "ip";
    case Metric::kCosine: return "cosine";
  }
  return "unknown";
}

Result<ElementType> ParseElementType(std::string_view name) {
  if (name == "float" || name == "float32" || name == "f32") return ElementType::kFloat32;
  if (name == "float16" || name == "f16" || name == "half") return ElementType::kFloat16;
  if (name == "bfloat16" || name == "bf16") return ElementType::kBFloat16;
  if (name == "uint8" || name == "u8") return ElementType::kUint8;
  if (name == "int8" || name == "i8") return ElementType::kInt8;
  return Status::InvalidArgument("unknown element type '" + std::string(name) +
                                 "' (expected float, float16, bfloat16, uint8 or int8)");
}

std::string_view ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat16: return "float16";
    case ElementType::kBFloat16: return "bfloat16";
    case ElementType::kUint8: return "uint8";
    case ElementType::kInt8: return "int8";
  }
  return "unknown";
}

std::size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return 4;
    case ElementType::kFloat16:
    case ElementType::kBFloat16: return 2;
    case ElementType::kUint8:
    case ElementType::kInt8: return 1;
  }
  return 0;
}

}  // namespace strata

// Anchor translation unit of the exported `strata` static library; the code
// lives in the module libraries it links (src/<module>/).
namespace strata {
const char* Version() { return "0.1.0"; }
}  // namespace strata

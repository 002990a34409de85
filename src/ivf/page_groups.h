// Locality order inside an IVF cluster: the cluster's members are split into
// page-sized groups of nearby vectors, so that the survivors of a query's
// RAM screen, which lie in a ball around the query, fall into few pages.
// Ordering by distance to the centroid alone (RaBitQ-SSD) puts vectors of equal
// radius but opposite directions side by side, and a query then finds its
// survivors in almost every page of the cluster.
//
// Groups come from recursive balanced bisection along the principal
// direction (a few power iterations): each split cuts at a multiple of the
// group size, so every group but the last fills a page exactly. Pure compute.
#ifndef STRATA_IVF_PAGE_GROUPS_H_
#define STRATA_IVF_PAGE_GROUPS_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace strata::ivf {

// Permutes `members` (row ids into `data`, n x d float32 row-major) so that
// each run of `group` consecutive members (the last run possibly shorter) is
// a group of nearby vectors. group >= 1; group >= members.size() leaves the
// order unchanged. Deterministic.
void OrderInPageGroups(const float* data, std::size_t d, std::span<std::uint32_t> members,
                       std::size_t group);

}  // namespace strata::ivf

#endif  // STRATA_IVF_PAGE_GROUPS_H_

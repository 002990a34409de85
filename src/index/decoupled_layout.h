// The decoupled layout of a built graph index (NAVIS's locality-driven
// decoupling): its node file split into an edge file (edge lists only, 1.3 R
// ids of room per list) and a vector file (full vectors in fixed slots), so
// that updates can rewrite small edge lists out of place and never the
// vectors beside them (format/edge_file.h, format/vector_file.h).
//
// Vertices are the node file's slots (neighbour ids are slots already) and
// a vertex's vector slot is its vertex number. Edge pages take the vertices
// in slot order: a page-shuffled node file's page mates stay together
// (about two node pages' worth to an edge page at R 64), a packed one's
// rows stay in row order. Empty slots of a shuffled file keep their number
// with an empty list and a zero vector.
#ifndef STRATA_INDEX_DECOUPLED_LAYOUT_H_
#define STRATA_INDEX_DECOUPLED_LAYOUT_H_

#include <cstdint>
#include <string>

#include "strata/result.h"

namespace strata {

struct DecoupledLayoutReport {
  std::uint64_t vertices = 0;
  std::uint64_t edge_pages = 0;
  std::uint64_t edge_bytes = 0;    // the edge file's size
  std::uint64_t vector_bytes = 0;  // the vector file's size
};

// Writes `out_dir`/graph.edges and `out_dir`/graph.vectors from
// `index_dir`/graph.nodes, reading it sequentially (RAM: one chunk of
// sectors). Each file is written atomically. Errors name the file.
Result<DecoupledLayoutReport> WriteDecoupledLayout(const std::string& index_dir,
                                                   const std::string& out_dir);

}  // namespace strata

#endif  // STRATA_INDEX_DECOUPLED_LAYOUT_H_

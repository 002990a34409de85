// Filling a graph index's node cache at open: DiskANN's BFS cache (nodes
// nearest the entry point by hops) or Starling's frequency cache (nodes most
// often expanded by warm-up queries), sized in nodes or MiB.
#ifndef STRATA_INDEX_NODE_CACHE_LOADER_H_
#define STRATA_INDEX_NODE_CACHE_LOADER_H_

#include "search/graph_index_data.h"
#include "strata/index.h"

namespace strata {

// Loads the cache `options` asks for into data->cache (nothing when it asks
// for none). Reads records synchronously; Corruption / IOError from the file.
Status LoadNodeCache(search::GraphIndexData* data, const OpenOptions& options);

}  // namespace strata

#endif  // STRATA_INDEX_NODE_CACHE_LOADER_H_

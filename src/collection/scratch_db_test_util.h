// A RocksDB store in a test's scratch directory, opened as the collection's
// unit tests need it (created if missing, default options).
#ifndef STRATA_COLLECTION_SCRATCH_DB_TEST_UTIL_H_
#define STRATA_COLLECTION_SCRATCH_DB_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>

namespace strata::collection {

inline std::unique_ptr<rocksdb::DB> OpenScratchDb(const std::string& path) {
  rocksdb::Options o;
  o.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::unique_ptr<rocksdb::DB>(db);
}

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_SCRATCH_DB_TEST_UTIL_H_

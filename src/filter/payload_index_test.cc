#include "filter/payload_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "strata/filter.h"

namespace strata::filter {
namespace {

std::vector<PayloadFieldSpec> Fields() {
  return {{"tags", PayloadFieldType::kKeyword},
          {"price", PayloadFieldType::kFloat},
          {"n", PayloadFieldType::kInteger},
          {"meta.source", PayloadFieldType::kKeyword},
          {"ok", PayloadFieldType::kBool}};
}

// Payloads that exercise every leaf kind: arrays, nulls, missing fields,
// integral floats, strings beside integers, nested objects, non-objects.
std::string RandomPayload(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (pick(20) == 0) return pick(2) ? "" : "[1,2]";
  std::string s = "{";
  auto add = [&](const std::string& kv) {
    if (s.size() > 1) s += ",";
    s += kv;
  };
  const char* words[] = {"\"red\"", "\"blue\"", "\"green\"", "\"cyan\"", "7", "null", "\"x\""};
  switch (pick(4)) {
    case 0:
      break;
    case 1:
      add(std::string("\"tags\":") + words[pick(7)]);
      break;
    default: {
      std::string arr = "[";
      const int len = pick(4);
      for (int i = 0; i < len; ++i) arr += (i ? "," : "") + std::string(words[pick(7)]);
      add("\"tags\":" + arr + "]");
    }
  }
  switch (pick(5)) {
    case 0:
      break;
    case 1:
      add("\"price\":null");
      break;
    case 2:
      add("\"price\":" + std::to_string(pick(100)));
      break;
    default:
      add("\"price\":" + std::to_string(pick(1000) / 10.0));
  }
  if (pick(2)) add("\"n\":[" + std::to_string(pick(5)) + "," + std::to_string(pick(5)) + ".0]");
  if (pick(2)) add(std::string("\"meta\":{\"source\":") + words[pick(7)] + "}");
  if (pick(3) == 0) add("\"meta\":[{\"source\":\"red\"},{\"source\":\"web\"}]");
  if (pick(2)) add(std::string("\"ok\":") + (pick(2) ? "true" : "false"));
  if (pick(4) == 0) add("\"other\":{\"tags\":\"red\"}");
  return s + "}";
}

const char* kFilters[] = {
    R"({"must":[{"key":"tags","match":{"value":"red"}}]})",
    R"({"must":[{"key":"tags","match":{"any":["blue","green"]}}]})",
    R"({"must":[{"key":"tags","match":{"except":["red","blue"]}}]})",
    R"({"must":[{"key":"tags","match":{"value":7}}]})",
    R"({"must":[{"key":"tags","match":{"value":"absent-word"}}]})",
    R"({"must":[{"key":"price","range":{"gte":10,"lt":50.5}}]})",
    R"({"must":[{"key":"n","match":{"value":3}}]})",
    R"({"must":[{"key":"n","range":{"gt":1}}],"must_not":[{"key":"tags","match":{"value":"red"}}]})",
    R"({"should":[{"key":"tags","match":{"value":"red"}},{"key":"meta.source","match":{"value":"web"}}]})",
    R"({"must":[{"is_empty":{"key":"tags"}}]})",
    R"({"must":[{"is_null":{"key":"price"}}]})",
    R"({"must":[{"key":"tags","values_count":{"gte":2}}]})",
    R"({"must":[{"key":"ok","match":{"value":true}},{"key":"tags","match":{"value":"cyan"}}]})",
    R"({"must":[{"key":"tags","match":{"value":"red"}},{"key":"tags","match":{"value":"blue"}}]})",
    R"({"must":[{"key":"tags","match":{"value":"red"}},{"key":"n","match":{"value":3}},{"key":"tags","match":{"value":"absent-word"}}]})",
    R"({"must":[{"has_id":[1,5,9,200,201,300,301]},{"key":"tags","match":{"value":"green"}}]})",
    R"({"must":[{"has_id":[1,5,9,200,201]}],"should":[{"key":"ok","match":{"value":false}}]})",
    R"({"min_should":{"conditions":[{"key":"tags","match":{"value":"red"}},{"key":"tags","match":{"value":"blue"}},{"key":"n","match":{"value":1}}],"min_count":2}})",
    R"({"must_not":[{"key":"meta[].source","match":{"any":["red","x"]}}]})",
};

// Checks that the index decides every filter as the JSON evaluator does,
// and that its candidates and bounds cover every passing point.
void ExpectAgrees(const PayloadIndex& index, const std::vector<std::string>& payloads,
                  const std::vector<bool>& present) {
  for (const char* text : kFilters) {
    SCOPED_TRACE(text);
    auto f = PayloadFilter::Parse(text);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE(index.Covers(f->root()));
    const BoundFilter bound = index.Bind(f->root());
    std::vector<VectorId> passing, matching;
    for (VectorId id = 0; id < payloads.size(); ++id) {
      const std::string_view p = present[id] ? std::string_view(payloads[id]) : std::string_view();
      const bool want = f->Matches(id, p);
      ASSERT_EQ(index.Matches(bound, id), want) << "id " << id << " payload " << p;
      if (want && present[id]) passing.push_back(id);
      if (want) matching.push_back(id);
    }
    // The batch check keeps exactly those (few ids: one at a time; many:
    // grouped by shard).
    for (const std::size_t n : {std::size_t{40}, payloads.size()}) {
      std::vector<VectorId> ids(n);
      std::iota(ids.begin(), ids.end(), VectorId{0});
      index.RetainMatching(bound, &ids);
      std::sort(ids.begin(), ids.end());
      std::vector<VectorId> want;
      for (VectorId id : matching) {
        if (id < n) want.push_back(id);
      }
      EXPECT_EQ(ids, want) << n << " ids";
    }
    const auto bound_count = index.UpperBound(f->root());
    if (bound_count) {
      EXPECT_GE(*bound_count, passing.size());
    }
    bool exact = false;
    const auto cands = index.Candidates(f->root(), payloads.size() * 4, &exact);
    EXPECT_EQ(cands.has_value(), bound_count.has_value());
    if (cands && exact) {  // then every candidate passes
      for (VectorId id : *cands) {
        const std::string_view p = present[id] ? std::string_view(payloads[id]) : std::string_view();
        EXPECT_TRUE(present[id] && f->Matches(id, p)) << "exact candidate " << id;
      }
    }
    if (cands) {
      EXPECT_TRUE(std::is_sorted(cands->begin(), cands->end()));
      for (VectorId id : passing) {
        EXPECT_TRUE(std::binary_search(cands->begin(), cands->end(), id)) << "id " << id;
      }
      EXPECT_FALSE(index.Candidates(f->root(), 0).has_value() && !passing.empty());
    }
    // The sample is drawn from the bounding lists: as many as asked (or
    // all), out of UpperBound in all; one Candidates left out (a
    // conjunction's other lists narrow them) fails the filter.
    const auto sample = index.SampleCandidates(f->root(), 16);
    EXPECT_EQ(sample.has_value(), bound_count.has_value());
    if (sample && cands) {
      EXPECT_EQ(sample->total, *bound_count);
      EXPECT_EQ(sample->ids.size(), std::min<std::uint64_t>(16, sample->total));
      for (VectorId id : sample->ids) {
        if (!std::binary_search(cands->begin(), cands->end(), id)) {
          EXPECT_FALSE(index.Matches(bound, id)) << "id " << id;
        }
      }
    }
  }
}

TEST(PayloadIndex, DecidesEveryConditionAsTheJsonEvaluator) {
  std::mt19937_64 rng(11);
  PayloadIndex index(Fields());
  std::vector<std::string> payloads(600);
  std::vector<bool> present(600, false);
  for (VectorId id = 0; id < 500; ++id) {
    payloads[id] = RandomPayload(rng);
    present[id] = true;
    index.Set(id, payloads[id]);
  }
  ExpectAgrees(index, payloads, present);
  // Replace half, erase a fifth: lists go stale and are compacted.
  for (int round = 0; round < 6; ++round) {
    for (VectorId id = 0; id < 600; ++id) {
      if (rng() % 2 == 0) {
        payloads[id] = RandomPayload(rng);
        present[id] = true;
        index.Set(id, payloads[id]);
      } else if (rng() % 5 == 0) {
        present[id] = false;
        index.Erase(id);
      }
    }
  }
  ExpectAgrees(index, payloads, present);
  std::uint64_t live = std::count(present.begin(), present.end(), true);
  EXPECT_EQ(index.points(), live);
  EXPECT_GT(index.MemoryBytes(), live * sizeof(Leaf));
}

TEST(PayloadIndex, CoversOnlyIndexedFieldsAndNoNested) {
  PayloadIndex index({{"tags", PayloadFieldType::kKeyword}});
  auto a = PayloadFilter::Parse(R"({"must":[{"key":"tags","match":{"value":"a"}},{"has_id":[3]}]})");
  auto b = PayloadFilter::Parse(R"({"must":[{"key":"price","range":{"lt":3}}]})");
  auto c = PayloadFilter::Parse(
      R"({"must":[{"nested":{"key":"tags","filter":{"must":[{"key":"x","match":{"value":1}}]}}}]})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(index.Covers(a->root()));
  EXPECT_FALSE(index.Covers(b->root()));
  EXPECT_FALSE(index.Covers(c->root()));
  // The most selective part of a conjunction bounds it.
  for (VectorId id = 0; id < 100; ++id) index.Set(id, R"({"tags":"a"})");
  EXPECT_EQ(index.UpperBound(a->root()).value_or(0), 1u);
  EXPECT_EQ(index.Candidates(a->root(), 10).value_or(std::vector<VectorId>{}),
            std::vector<VectorId>{3});
  auto only_a = PayloadFilter::Parse(R"({"must":[{"key":"tags","match":{"value":"a"}}]})");
  EXPECT_FALSE(index.Candidates(only_a->root(), 99).has_value());
  EXPECT_EQ(index.Candidates(only_a->root(), 100)->size(), 100u);
}

// A point's values of one field by type (the labels of a label-aware
// graph): arrays flattened, other types skipped, nothing for an unknown point.
TEST(PayloadIndex, AppendsOnePointsValuesOfOneField) {
  PayloadIndex index({{"tags", PayloadFieldType::kKeyword}, {"n", PayloadFieldType::kInteger}});
  index.Set(1, R"({"tags":["x","y",3],"n":[5,"z",null]})");
  index.Set(2, R"({"tags":"y"})");
  std::vector<std::string> words;
  std::vector<std::int64_t> numbers;
  index.AppendStrings(1, 0, &words);
  EXPECT_EQ(words, (std::vector<std::string>{"x", "y"}));
  index.AppendIntegers(1, 0, &numbers);
  EXPECT_EQ(numbers, (std::vector<std::int64_t>{3}));
  words.clear();
  index.AppendStrings(1, 1, &words);
  EXPECT_EQ(words, (std::vector<std::string>{"z"}));
  words.clear();
  index.AppendStrings(2, 0, &words);
  EXPECT_EQ(words, (std::vector<std::string>{"y"}));
  words.clear();
  index.AppendStrings(7, 0, &words);  // not indexed
  index.AppendStrings(1, 5, &words);  // no such field
  EXPECT_TRUE(words.empty());
}

TEST(PayloadIndex, FieldTypesAndPathsAreChecked) {
  EXPECT_EQ(*ParsePayloadFieldType("integer"), PayloadFieldType::kInteger);
  EXPECT_FALSE(ParsePayloadFieldType("text").ok());
  EXPECT_EQ(PayloadFieldTypeName(PayloadFieldType::kFloat), "float");
  EXPECT_TRUE(CheckPayloadPath("metadata.source").ok());
  EXPECT_TRUE(CheckPayloadPath("items[].sku").ok());
  EXPECT_FALSE(CheckPayloadPath("a..b").ok());
  EXPECT_FALSE(CheckPayloadPath("").ok());
  EXPECT_FALSE(CheckPayloadPath("a[0]").ok());
}

// One writer replacing payloads while readers decide filters: a reader
// sees each point's old or new values, never a torn row (run under TSan).
TEST(PayloadIndex, ReadersRunBesideTheWriter) {
  PayloadIndex index({{"tags", PayloadFieldType::kKeyword}, {"n", PayloadFieldType::kInteger}});
  for (VectorId id = 0; id < 1000; ++id) index.Set(id, R"({"tags":["a","b"],"n":1})");
  auto f = PayloadFilter::Parse(R"({"must":[{"key":"tags","match":{"value":"a"}},{"key":"n","match":{"value":1}}]})");
  ASSERT_TRUE(f.ok());
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> torn{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const BoundFilter b = index.Bind(f->root());
        for (VectorId id = 0; id < 1000; ++id) {
          // Every version written has both conditions agree.
          if (!index.Matches(b, id)) torn++;
        }
        (void)index.Candidates(f->root(), 2000);
        std::vector<std::string> words;  // shard lock, then the intern table's
        for (VectorId id = 0; id < 1000; id += 7) index.AppendStrings(id, 0, &words);
        if (words.empty()) torn++;
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    for (VectorId id = 0; id < 1000; ++id) {
      index.Set(id, round % 2 ? R"({"tags":["b","a"],"n":[1]})" : R"({"tags":"a","n":1.0})");
    }
  }
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(torn.load(), 0u);
}

}  // namespace
}  // namespace strata::filter

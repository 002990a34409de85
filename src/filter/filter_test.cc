// PayloadFilter: every condition kind against hand-checked payloads, the
// array, null and missing-field rules, nesting, and parse errors that name
// their place.
#include "strata/filter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace strata {
namespace {

// The ids among `payloads` (id = position) that pass `filter_json`.
std::vector<VectorId> Passing(const std::string& filter_json,
                              const std::vector<std::string>& payloads) {
  auto f = PayloadFilter::Parse(filter_json);
  EXPECT_TRUE(f.ok()) << filter_json << ": " << f.status().ToString();
  std::vector<VectorId> out;
  if (!f.ok()) return out;
  for (VectorId id = 0; id < payloads.size(); ++id) {
    if (f->Matches(id, payloads[id])) out.push_back(id);
  }
  return out;
}

using Ids = std::vector<VectorId>;

const std::vector<std::string> kPayloads = {
    R"({"color": "red", "price": 10, "tags": ["a", "b"], "n": 1})",        // 0
    R"({"color": "blue", "price": 55.5, "tags": ["b"], "n": 2.0})",        // 1
    R"({"color": "red", "price": 49.99, "tags": [], "n": null})",          // 2
    R"({"price": "cheap", "tags": "a", "meta": {"source": "web"}})",       // 3
    R"({"color": ["green", "red"], "meta": {"source": "book", "y": 2001}})",  // 4
    "",                                                                     // 5: no payload
    "not json at all",                                                      // 6
    R"({"ok": true, "n": [1, null, 3]})",                                   // 7
};

TEST(PayloadFilter, MatchValueAnyExcept) {
  EXPECT_EQ(Passing(R"({"must": [{"key": "color", "match": {"value": "red"}}]})", kPayloads),
            (Ids{0, 2, 4}));  // 4: an array with "red"
  EXPECT_EQ(Passing(R"({"must": {"key": "color", "match": {"any": ["blue", "green"]}}})", kPayloads),
            (Ids{1, 4}));
  // except: some value outside the list, or no value at all.
  EXPECT_EQ(Passing(R"({"must": [{"key": "color", "match": {"except": ["red"]}}]})", kPayloads),
            (Ids{1, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "tags", "match": {"value": "a"}}]})", kPayloads),
            (Ids{0, 3}));
  // Integers match integral numbers of either JSON kind, not strings.
  EXPECT_EQ(Passing(R"({"must": [{"key": "n", "match": {"value": 2}}]})", kPayloads), (Ids{1}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "n", "match": {"any": [1, 3]}}]})", kPayloads),
            (Ids{0, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "ok", "match": {"value": true}}]})", kPayloads), (Ids{7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "price", "match": {"value": "10"}}]})", kPayloads), (Ids{}));
}

TEST(PayloadFilter, RangeAndValuesCount) {
  EXPECT_EQ(Passing(R"({"must": [{"key": "price", "range": {"lt": 50}}]})", kPayloads),
            (Ids{0, 2}));  // 3's "cheap" is not a number
  EXPECT_EQ(Passing(R"({"must": [{"key": "price", "range": {"gte": 10, "lte": 49.99}}]})", kPayloads),
            (Ids{0, 2}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "price", "range": {"gt": 10}}]})", kPayloads), (Ids{1, 2}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "tags", "values_count": {"gte": 1}}]})", kPayloads),
            (Ids{0, 1, 3}));
  // Missing fields count 0 values; nulls are no value.
  EXPECT_EQ(Passing(R"({"must": [{"key": "tags", "values_count": {"lt": 1}}]})", kPayloads),
            (Ids{2, 4, 5, 6, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "n", "values_count": {"gte": 2}}]})", kPayloads), (Ids{7}));
}

TEST(PayloadFilter, EmptyNullIdsAndPaths) {
  EXPECT_EQ(Passing(R"({"must": [{"is_empty": {"key": "tags"}}]})", kPayloads),
            (Ids{2, 4, 5, 6, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"is_null": {"key": "n"}}]})", kPayloads), (Ids{2}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "n", "is_null": true}]})", kPayloads), (Ids{2}));
  EXPECT_EQ(Passing(R"({"must": [{"has_id": [7, 2, 100]}]})", kPayloads), (Ids{2, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "meta.source", "match": {"value": "book"}}]})", kPayloads),
            (Ids{4}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "meta.y", "range": {"gt": 2000}}]})", kPayloads), (Ids{4}));
}

TEST(PayloadFilter, ClausesCombine) {
  EXPECT_EQ(Passing(R"({"should": [{"key": "color", "match": {"value": "blue"}},
                                   {"has_id": [6]}]})",
                    kPayloads),
            (Ids{1, 6}));
  EXPECT_EQ(Passing(R"({"must_not": [{"key": "color", "match": {"value": "red"}}]})", kPayloads),
            (Ids{1, 3, 5, 6, 7}));
  EXPECT_EQ(Passing(R"({"must": [{"key": "color", "match": {"value": "red"}}],
                        "must_not": [{"key": "price", "range": {"lt": 20}}]})",
                    kPayloads),
            (Ids{2, 4}));
  EXPECT_EQ(Passing(R"({"min_should": {"min_count": 2, "conditions": [
                          {"key": "color", "match": {"value": "red"}},
                          {"key": "tags", "match": {"value": "b"}},
                          {"key": "price", "range": {"lt": 20}}]}})",
                    kPayloads),
            (Ids{0}));
  // A filter as a condition, and an empty should that binds nothing.
  EXPECT_EQ(Passing(R"({"must": [{"should": [{"has_id": [0]}, {"has_id": [1]}]}], "should": []})",
                    kPayloads),
            (Ids{0, 1}));
  EXPECT_EQ(Passing("{}", kPayloads).size(), kPayloads.size());
}

TEST(PayloadFilter, NestedObjectsInArrays) {
  const std::vector<std::string> p = {
      R"({"cities": [{"name": "Oslo", "pop": 700}, {"name": "Bergen", "pop": 280}]})",
      R"({"cities": [{"name": "Oslo", "pop": 100}, {"name": "Bergen", "pop": 900}]})",
      R"({"cities": {"name": "Oslo", "pop": 800}})",
  };
  // One element must pass the whole inner filter...
  const std::string nested = R"({"must": [{"nested": {"key": "cities", "filter": {"must": [
      {"key": "name", "match": {"value": "Oslo"}}, {"key": "pop", "range": {"gt": 500}}]}}}]})";
  EXPECT_EQ(Passing(nested, p), (Ids{0, 2}));
  // ... while two separate array conditions may be met by different elements.
  EXPECT_EQ(Passing(R"({"must": [{"key": "cities[].name", "match": {"value": "Oslo"}},
                                 {"key": "cities[].pop", "range": {"gt": 500}}]})",
                    p),
            (Ids{0, 1, 2}));
  auto f = PayloadFilter::Parse(nested);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->fields(), (std::vector<std::string>{"cities", "cities[].name", "cities[].pop"}));
}

TEST(PayloadFilter, IdOnlyFiltersNeedNoPayload) {
  auto f = PayloadFilter::Parse(R"({"must_not": [{"has_id": [3]}]})");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->reads_payload());
  EXPECT_FALSE(f->empty());
  EXPECT_TRUE(f->Matches(2, "{broken"));
  EXPECT_FALSE(f->Matches(3, ""));
  EXPECT_TRUE(PayloadFilter().empty());
  EXPECT_TRUE(PayloadFilter().Matches(1, "anything"));
}

TEST(PayloadFilter, ErrorsNameTheirPlace) {
  struct Case {
    const char* json;
    const char* where;
  };
  const Case cases[] = {
      {"[1]", "filter: a filter must be an object"},
      {"{\"must\": [{\"key\": \"a\", \"match\": {\"valu\": 1}}]}", "filter.must[0].match: unknown key 'valu'"},
      {"{\"must\": [{\"key\": \"a\", \"match\": {\"value\": 1.5}}]}", "filter.must[0].match.value"},
      {"{\"must\": [{\"key\": \"a\", \"match\": {\"any\": [\"x\", 1]}}]}", "mixes strings and integers"},
      {"{\"must\": [{\"key\": \"a\", \"range\": {\"lt\": \"2024-01-01\"}}]}", "datetime ranges are not supported"},
      {"{\"must\": [{\"key\": \"a\", \"match\": {\"text\": \"x\"}}]}", "full-text match 'text' is not supported"},
      {"{\"must\": [{\"key\": \"a\"}]}", "exactly one of match, range, values_count"},
      {"{\"must\": [{\"key\": \"a\", \"match\": {\"value\": 1}, \"range\": {\"lt\": 2}}]}", "exactly one"},
      {"{\"should\": [{\"has_id\": [\"550e8400-e29b-41d4-a716-446655440000\"]}]}", "UUID"},
      {"{\"must_not\": [{\"has_id\": [-1]}]}", "filter.must_not[0].has_id[0]"},
      {"{\"must\": [{\"nested\": {\"key\": \"c\", \"filter\": {\"must\": [{\"has_id\": [1]}]}}}]}", "inside nested"},
      {"{\"must\": [{\"key\": \"a..b\", \"match\": {\"value\": 1}}]}", "not a dotted path"},
      {"{\"must\": [{\"geo_radius\": {}}]}", "unknown condition"},
      {"{\"must\": [{\"key\": \"loc\", \"geo_radius\": {}}]}", "geo conditions are not supported"},
      {"{\"min_should\": {\"conditions\": [], \"min_count\": 0}}", "min_count: must be an integer >= 1"},
      {"{\"must\": [{\"key\": \"a\", \"values_count\": {\"lt\": 1.5}}]}", "must be a count"},
      {"{\"mustnt\": []}", "filter: unknown key 'mustnt'"},
      {"{\"must\": 3}", "filter.must: must be a condition or a list"},
      {"{\"must\": [{}]}", "an empty condition"},
      {"not json", "not valid JSON"},
  };
  for (const Case& c : cases) {
    auto f = PayloadFilter::Parse(c.json);
    ASSERT_FALSE(f.ok()) << c.json;
    EXPECT_TRUE(f.status().IsInvalidArgument()) << c.json;
    EXPECT_NE(f.status().message().find(c.where), std::string::npos)
        << c.json << " -> " << f.status().message();
  }
}

// The evaluator against a direct reimplementation of three common shapes,
// over random payloads: tags (a keyword list), price (a number), id sets.
TEST(PayloadFilter, AgreesWithADirectCheckOnRandomPayloads) {
  std::mt19937_64 rng(5);
  const char* tags[] = {"a", "b", "c", "d"};
  auto f = PayloadFilter::Parse(R"({"must": [{"key": "tags", "match": {"any": ["a", "c"]}},
                                            {"key": "price", "range": {"gte": 20, "lt": 70}}],
                                   "must_not": [{"has_id": [5, 17, 33]}]})");
  ASSERT_TRUE(f.ok());
  int passed = 0;
  for (VectorId id = 0; id < 2000; ++id) {
    std::string list;
    bool has_a_or_c = false;
    for (const char* t : tags) {
      if (rng() % 2) {
        if (!list.empty()) list += ',';
        list += std::string("\"") + t + "\"";
        has_a_or_c = has_a_or_c || t[0] == 'a' || t[0] == 'c';
      }
    }
    const int price = static_cast<int>(rng() % 100);
    std::string payload = "{\"tags\": [";
    payload += list;
    payload += "], \"price\": ";
    payload += std::to_string(price);
    payload += '}';
    const bool expect = has_a_or_c && price >= 20 && price < 70 && id != 5 && id != 17 && id != 33;
    EXPECT_EQ(f->Matches(id, payload), expect) << payload;
    passed += expect;
  }
  EXPECT_GT(passed, 300);  // the check exercised both outcomes
  EXPECT_LT(passed, 1700);
}

}  // namespace
}  // namespace strata

// The entity's store: maps added, withdrawn, listed, and still there after the file is opened again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store.hpp"

namespace uet::entity {
namespace {

std::string temp_db() {
  auto dir = std::filesystem::temp_directory_path() / ("uet-entity-store-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "entity.db").string();
}

TEST(Store, MapsAreAddedWithdrawnAndListed) {
  Store s(":memory:");
  s.map(10, "svc", {5, 6});
  s.map(10, "svc", {6, 7});  // adding what is there changes nothing
  s.map(11, "other", {5});
  EXPECT_EQ(s.jobs(10, "svc"), (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_TRUE(s.jobs(10, "other").empty());
  EXPECT_EQ(s.unmap(10, "svc", {6, 99}), 1u);
  EXPECT_EQ(s.jobs(10, "svc"), (std::vector<uint32_t>{5, 7}));
  EXPECT_EQ(s.list(std::nullopt, std::nullopt).size(), 3u);
  EXPECT_EQ(s.list(11, std::nullopt).size(), 1u);
  EXPECT_EQ(s.list(std::nullopt, std::string("svc")).size(), 2u);
  EXPECT_EQ(s.unmap(10, "svc", {}), 2u);
  EXPECT_TRUE(s.jobs(10, "svc").empty());
}

TEST(Store, WhatWasCommittedOutlivesTheProcess) {
  const std::string path = temp_db();
  {
    Store s(path);
    s.map(20, "svc", {0x123});
  }
  Store again(path);
  EXPECT_EQ(again.jobs(20, "svc"), (std::vector<uint32_t>{0x123}));
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Store, AnUnopenableFileIsNamed) {
  try {
    Store s("/nonexistent-folder/entity.db");
    FAIL() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/entity.db"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uet::entity

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

// Processes of the tests' own making: a pid and a start time.
constexpr Store::Process kTen{10, 1000}, kEleven{11, 1100}, kTwenty{20, 2000};

TEST(Store, MapsAreAddedWithdrawnAndListed) {
  Store s(":memory:");
  s.map(kTen, "svc", {5, 6});
  s.map(kTen, "svc", {6, 7});  // adding what is there changes nothing
  s.map(kEleven, "other", {5});
  EXPECT_EQ(s.jobs(kTen, "svc"), (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_TRUE(s.jobs(kTen, "other").empty());
  EXPECT_EQ(s.unmap(10, "svc", {6, 99}), 1u);
  EXPECT_EQ(s.jobs(kTen, "svc"), (std::vector<uint32_t>{5, 7}));
  EXPECT_EQ(s.list(std::nullopt, std::nullopt).size(), 3u);
  EXPECT_EQ(s.list(11, std::nullopt).size(), 1u);
  EXPECT_EQ(s.list(std::nullopt, std::string("svc")).size(), 2u);
  EXPECT_EQ(s.unmap(10, "svc", {}), 2u);
  EXPECT_TRUE(s.jobs(kTen, "svc").empty());
}

TEST(Store, AMapIsTheMappedProcesssNotItsPids) {
  Store s(":memory:");
  s.map(kTen, "svc", {5}, {{7, 5}});
  const Store::Process reused{10, 1001};  // the same pid, started later: another process
  EXPECT_TRUE(s.jobs(reused, "svc").empty());
  EXPECT_TRUE(s.jobs_of(reused).empty());
  EXPECT_TRUE(s.jobs({10, 0}, "svc").empty());  // a process gone before it was named
  // Mapping the pid's new process drops what the old one had, bindings included.
  s.map(reused, "svc", {6});
  EXPECT_EQ(s.jobs(reused, "svc"), (std::vector<uint32_t>{6}));
  EXPECT_TRUE(s.jobs(kTen, "svc").empty());
  EXPECT_TRUE(s.bindings(10, "svc").empty());
  // A pid no process had when it was mapped grants nothing, to anyone, later.
  s.map({12, 0}, "svc", {8});
  EXPECT_TRUE(s.jobs({12, 1200}, "svc").empty());
  EXPECT_EQ(s.list(12, std::nullopt).size(), 1u);  // yet it is listed, as root made it
}

TEST(Store, WhatWasCommittedOutlivesTheProcess) {
  const std::string path = temp_db();
  {
    Store s(path);
    s.map(kTwenty, "svc", {0x123});
  }
  Store again(path);
  EXPECT_EQ(again.jobs(kTwenty, "svc"), (std::vector<uint32_t>{0x123}));
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

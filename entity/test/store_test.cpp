// The entity's store: maps added, withdrawn, listed, and still there after the file is opened again; its files
// only the entity's user reads, in a folder no other user writes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

unsigned mode_of(const std::string& path) {
  struct stat st{};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// What opening a store at `path` throws ("" when it opens).
std::string refusal(const std::string& path) {
  try {
    Store s(path);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// The keys are in the file and its write-ahead log: made 0600 whatever the umask, not 0644.
TEST(StoreFiles, AreMadeForItsUserAlone) {
  const std::string path = temp_db();
  const mode_t was = umask(022);
  {
    Store s(path);
    s.set_key({7, std::vector<uint8_t>(32, 0xAB), 1, 291});
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(mode_of(path + "-wal"), 0600u);
  }
  umask(was);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(StoreFiles, AnOpenStoreOfItsUserIsMadePrivate) {
  const std::string path = temp_db();
  std::ofstream(path).close();
  std::ofstream(path + "-wal").close();
  chmod(path.c_str(), 0644);
  chmod((path + "-wal").c_str(), 0666);
  {
    Store s(path);
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(mode_of(path + "-wal"), 0600u);
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(StoreFiles, AFolderOthersMayWriteIsRefused) {
  const std::string path = temp_db();
  const std::string folder = std::filesystem::path(path).parent_path();
  for (const mode_t open : {0777, 01777, 0775}) {
    chmod(folder.c_str(), open);
    EXPECT_EQ(refusal(path), "the entity's store " + path + ": its folder " + folder + " is writable by other users");
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing was made there
  std::filesystem::remove_all(folder);
}

TEST(StoreFiles, ALinkIsRefused) {
  const std::string path = temp_db();
  const std::string folder = std::filesystem::path(path).parent_path();
  std::ofstream(folder + "/elsewhere").close();
  for (const std::string& name : {path, path + "-wal"}) {
    std::filesystem::create_symlink(folder + "/elsewhere", name);
    EXPECT_EQ(refusal(path), "the entity's store " + path + ": " + name + " is a symlink");
    std::filesystem::remove(name);
  }
  std::filesystem::create_directories(folder + "/real");
  std::filesystem::create_directory_symlink(folder + "/real", folder + "/link");
  EXPECT_EQ(refusal(folder + "/link/entity.db"),
            "the entity's store " + folder + "/link/entity.db: its folder " + folder + "/link is a symlink");
  std::filesystem::remove_all(folder);
}

// A FIFO under a companion's name would hang an open that waits for a writer: refused at once instead.
TEST(StoreFiles, AFifoIsRefusedWithoutWaiting) {
  const std::string path = temp_db();
  ASSERT_EQ(mkfifo((path + "-wal").c_str(), 0600), 0);
  EXPECT_EQ(refusal(path), "the entity's store " + path + ": " + path + "-wal is not a regular file");
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(StoreFiles, AFileOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs uid 0";
  const std::string path = temp_db();
  const std::string folder = std::filesystem::path(path).parent_path();
  for (const std::string& name : {path, path + "-wal", path + "-shm"}) {
    std::ofstream(name).close();
    ASSERT_EQ(chown(name.c_str(), 65534, 65534), 0);
    EXPECT_EQ(refusal(path), "the entity's store " + path + ": " + name + " belongs to uid 65534, not to this "
                             "process's user");
    std::filesystem::remove(name);
  }
  ASSERT_EQ(chown(folder.c_str(), 65534, 65534), 0);
  EXPECT_EQ(refusal(path), "the entity's store " + path + ": its folder " + folder + " belongs to uid 65534");
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace uet::entity

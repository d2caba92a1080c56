// StateStore: round trips, atomic replacement, and the error texts for each way a save or load can fail,
// including a full filesystem (a tiny tmpfs, when the test may mount one).

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/state_store.hpp"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tidemark-state-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

PersistedState state_at(std::string position) {
  PersistedState s;
  s.pipeline = "shop";
  s.source_type = "postgres";
  s.position = SourcePosition{std::move(position)};
  return s;
}

TEST(StateStore, MissingFileIsAFirstStart) {
  const TempDir dir;
  const StateLoadResult r = StateStore(dir.file("state.json")).load();
  EXPECT_FALSE(r.state.has_value());
  EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST(StateStore, SaveLoadRoundTrip) {
  const TempDir dir;
  const StateStore store(dir.file("state.json"));
  PersistedState s = state_at("lsn:0/16B3748 \"quoted\" \xc3\xa9");
  s.extensions = nlohmann::json{{"snapshot", {{"table", "public.orders"}, {"done", 42}}}};
  ASSERT_EQ(store.save(s), std::nullopt);
  const StateLoadResult r = store.load();
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_TRUE(r.state.has_value());
  EXPECT_EQ(r.state->pipeline, "shop");
  EXPECT_EQ(r.state->source_type, "postgres");
  ASSERT_TRUE(r.state->position.has_value());
  EXPECT_EQ(r.state->position->token, s.position->token);
  EXPECT_EQ(r.state->extensions, s.extensions);

  // A newer save replaces the older one.
  ASSERT_EQ(store.save(state_at("lsn:0/2000000")), std::nullopt);
  EXPECT_EQ(store.load().state->position->token, "lsn:0/2000000");

  // No position (nothing committed yet) round-trips as no position.
  PersistedState none = state_at("x");
  none.position.reset();
  ASSERT_EQ(store.save(none), std::nullopt);
  const StateLoadResult r2 = store.load();
  ASSERT_TRUE(r2.state.has_value()) << r2.error;
  EXPECT_FALSE(r2.state->position.has_value());
}

TEST(StateStore, NoTemporaryFileLeftBehind) {
  const TempDir dir;
  const StateStore store(dir.file("state.json"));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(store.save(state_at("p" + std::to_string(i))), std::nullopt);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"state.json"});
  ASSERT_EQ(store.check_writable(), std::nullopt);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"state.json"});  // the probe is removed too
}

TEST(StateStore, CorruptFileNamesTheFile) {
  const TempDir dir;
  const std::string path = dir.file("state.json");
  for (const std::string text : {"{not json", "", "[1,2,3]", R"({"format":1,"pipeline":"shop"})",
                                 R"({"format":1,"pipeline":"shop","source_type":"postgres","position":17})"}) {
    SCOPED_TRACE(text);
    write_file(path, text);
    const StateLoadResult r = StateStore(path).load();
    EXPECT_FALSE(r.state.has_value());
    EXPECT_NE(r.error.find(path), std::string::npos) << r.error;
  }
}

TEST(StateStore, UnknownFormatVersionIsRefused) {
  const TempDir dir;
  const std::string path = dir.file("state.json");
  write_file(path, R"({"format":2,"pipeline":"shop","source_type":"postgres","position":"p"})");
  const StateLoadResult r = StateStore(path).load();
  EXPECT_FALSE(r.state.has_value());
  EXPECT_NE(r.error.find(path), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("format"), std::string::npos) << r.error;
}

TEST(StateStore, MissingDirectoryNamesTheDirectoryAndKeepsThePreviousFile) {
  const TempDir dir;
  const std::string missing = dir.file("no-such-dir");
  const std::optional<std::string> error = StateStore(missing + "/state.json").save(state_at("p"));
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find(missing), std::string::npos) << *error;
  EXPECT_NE(error->find("No such file or directory"), std::string::npos) << *error;
  EXPECT_NE(error->find("previous state file is intact"), std::string::npos) << *error;
  EXPECT_FALSE(fs::exists(missing));

  const std::optional<std::string> check = StateStore(missing + "/state.json").check_writable();
  ASSERT_TRUE(check.has_value());
  EXPECT_NE(check->find(missing), std::string::npos) << *check;
}

// True when permission bits do not stop this process (root, CAP_DAC_OVERRIDE).
bool permission_bits_are_ignored(const fs::path& read_only_dir) {
  const std::string probe = (read_only_dir / "probe").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

TEST(StateStore, CheckWritableOnAReadOnlyDirectory) {
  const TempDir dir;
  const fs::path ro = dir.path() / "read-only";
  fs::create_directory(ro);
  ASSERT_EQ(::chmod(ro.c_str(), 0555), 0);

  std::string path = (ro / "state.json").string();
  std::string expected_cause = "Permission denied";
  if (permission_bits_are_ignored(ro)) {
    // Running privileged: 0555 does not stop us. A parent that is a regular file stops everyone.
    const std::string regular = dir.file("regular-file");
    write_file(regular, "x");
    path = regular + "/state.json";
    expected_cause = "Not a directory";
    RecordProperty("read_only_case", "privileged process: used a regular-file parent instead of chmod 0555");
  }
  const std::optional<std::string> error = StateStore(path).check_writable();
  ASSERT_TRUE(error.has_value()) << "check_writable accepted " << path;
  EXPECT_NE(error->find(expected_cause), std::string::npos) << *error;
  EXPECT_NE(error->find(path), std::string::npos) << *error;

  const std::optional<std::string> save_error = StateStore(path).save(state_at("p"));
  ASSERT_TRUE(save_error.has_value());
  EXPECT_NE(save_error->find(expected_cause), std::string::npos) << *save_error;
}

TEST(StateStore, ParentThatIsAFileFailsEvenForRoot) {
  const TempDir dir;
  const std::string regular = dir.file("regular-file");
  write_file(regular, "x");
  const std::string path = regular + "/state.json";
  const std::optional<std::string> check = StateStore(path).check_writable();
  ASSERT_TRUE(check.has_value());
  EXPECT_NE(check->find("Not a directory"), std::string::npos) << *check;
  const std::optional<std::string> save = StateStore(path).save(state_at("p"));
  ASSERT_TRUE(save.has_value());
  EXPECT_NE(save->find("Not a directory"), std::string::npos) << *save;
  EXPECT_NE(save->find("previous state file is intact"), std::string::npos) << *save;
}

// A 16 KiB tmpfs mounted for the length of one test.
class TinyTmpfs {
 public:
  TinyTmpfs() {
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=16k") != 0) {
      error_ = std::string("mount -t tmpfs -o size=16k failed: ") + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~TinyTmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  TinyTmpfs(const TinyTmpfs&) = delete;
  TinyTmpfs& operator=(const TinyTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  std::string file(const std::string& name) const { return dir_.file(name); }
  const fs::path& path() const { return dir_.path(); }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string error_;
};

TEST(StateStore, FullDiskKeepsThePreviousFile) {
  const TinyTmpfs tmpfs;
  if (!tmpfs.mounted()) GTEST_SKIP() << tmpfs.error() << " (needs CAP_SYS_ADMIN)";

  const StateStore store(tmpfs.file("state.json"));
  ASSERT_EQ(store.save(state_at("old-position")), std::nullopt);

  // Fill the filesystem.
  const std::string filler = tmpfs.file("filler");
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::string block(4096, 'f');
  int last_errno = 0;
  for (int i = 0; i < 1024; ++i) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n < 0) {
      last_errno = errno;
      break;
    }
  }
  ::close(fd);
  ASSERT_EQ(last_errno, ENOSPC) << "could not fill the tmpfs: " << std::strerror(last_errno);
  // Fill the last bytes too, one at a time.
  const int fd2 = ::open(filler.c_str(), O_WRONLY | O_APPEND);
  while (::write(fd2, "f", 1) == 1) {
  }
  ::close(fd2);

  const std::optional<std::string> error = store.save(state_at("new-position"));
  ASSERT_TRUE(error.has_value()) << "save succeeded on a full filesystem";
  EXPECT_NE(error->find("No space left"), std::string::npos) << *error;
  EXPECT_NE(error->find("Free space"), std::string::npos) << *error;
  EXPECT_NE(error->find("previous state file is intact"), std::string::npos) << *error;
  EXPECT_FALSE(fs::exists(tmpfs.file("state.json.tmp"))) << "a failed save left its temporary file";

  const StateLoadResult r = store.load();
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_TRUE(r.state.has_value());
  ASSERT_TRUE(r.state->position.has_value());
  EXPECT_EQ(r.state->position->token, "old-position");

  // Once there is room again, saving works.
  fs::remove(filler);
  ASSERT_EQ(store.save(state_at("new-position")), std::nullopt);
  EXPECT_EQ(store.load().state->position->token, "new-position");
}

}  // namespace
}  // namespace tidemark

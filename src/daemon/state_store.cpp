#include "daemon/state_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tidemark {

namespace {

constexpr int kStateFormatVersion = 1;

std::string directory_of(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// One message per cause, each naming the fix.
enum class WriteContext { Saving, Checking };

std::string describe_write_error(const std::string& what, const std::string& path, int err,
                                 WriteContext context = WriteContext::Saving) {
  std::string msg = "cannot " + what + " state file " + path + ": " + std::strerror(err) + ". ";
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      msg += "Free space on that filesystem or move state.path elsewhere.";
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      msg += "Make " + directory_of(path) + " writable by the daemon's user (the systemd unit uses StateDirectory=tidemark).";
      break;
    case ENOENT:
      msg += "Create the directory " + directory_of(path) + " or set state.path to an existing one.";
      break;
    default:
      msg += "Check the filesystem holding state.path.";
  }
  if (context == WriteContext::Checking) return msg;
  return msg + " The previous state file is intact: a restart replays from the last persisted position.";
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

StateStore::StateStore(std::string path) : path_(std::move(path)) {}

StateLoadResult StateStore::load() const {
  StateLoadResult result;
  std::ifstream in(path_);
  if (!in) {
    if (errno != ENOENT) result.error = "cannot read state file " + path_ + ": " + std::strerror(errno);
    return result;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    const auto doc = nlohmann::json::parse(buffer.str());
    if (doc.value("format", 0) != kStateFormatVersion) {
      result.error = "state file " + path_ + " has an unknown format version; it was written by another Tidemark version";
      return result;
    }
    PersistedState state;
    state.pipeline = doc.at("pipeline").get<std::string>();
    state.source_type = doc.at("source_type").get<std::string>();
    if (doc.contains("position") && !doc["position"].is_null())
      state.position = SourcePosition{doc["position"].get<std::string>()};
    if (doc.contains("extensions")) state.extensions = doc["extensions"];
    result.state = std::move(state);
  } catch (const nlohmann::json::exception& e) {
    result.error = "state file " + path_ + " is not valid (" + e.what() +
                   "); restore it from a backup, or delete it to start again from the current end of the log";
  }
  return result;
}

std::optional<std::string> StateStore::save(const PersistedState& state) const {
  nlohmann::json doc = {{"format", kStateFormatVersion},
                        {"pipeline", state.pipeline},
                        {"source_type", state.source_type},
                        {"position", state.position ? nlohmann::json(state.position->token) : nlohmann::json()},
                        {"extensions", state.extensions}};
  const std::string text = doc.dump(2) + "\n";
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return describe_write_error("create", tmp, errno);
  if (!write_all(fd, text) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return describe_write_error("write", tmp, err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return describe_write_error("write", tmp, err);
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return describe_write_error("replace", path_, err);
  }
  if (!fsync_directory(directory_of(path_))) return describe_write_error("sync the directory of", path_, errno);
  return std::nullopt;
}

std::optional<std::string> StateStore::check_writable() const {
  const std::string probe = path_ + ".check";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return describe_write_error("create", probe, errno, WriteContext::Checking);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace tidemark

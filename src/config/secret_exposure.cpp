#include "config/secret_exposure.hpp"

#include <sys/stat.h>

#include <yaml-cpp/yaml.h>

namespace tidemark {

std::optional<std::string> inline_secret_warning(const std::string& config_path) {
  struct stat st {};
  if (::stat(config_path.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return std::nullopt;
  try {
    const YAML::Node root = YAML::LoadFile(config_path);
    const YAML::Node password = root["source"] ? root["source"]["password"] : YAML::Node();
    if (!password || !password.IsScalar()) return std::nullopt;
    const std::string text = password.Scalar();
    if (text.empty() || text.find("${") != std::string::npos) return std::nullopt;
    return "source.password (line " + std::to_string(password.Mark().line + 1) + ") is written into " + config_path +
           ", which every user of this machine can read: put it in the environment file (TIDEMARK_SOURCE_PASSWORD=... "
           "in /etc/tidemark/tidemark.env) and write source.password: ${TIDEMARK_SOURCE_PASSWORD}, or chmod o-r " +
           config_path;
  } catch (const YAML::Exception&) {
    return std::nullopt;  // the loader has reported it
  }
}

}  // namespace tidemark

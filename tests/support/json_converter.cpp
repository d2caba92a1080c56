#include "json_converter.hpp"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "process.hpp"

namespace tidemark::test {

ConverterReport read_with_json_converter(const std::vector<ConsumedRecord>& records) {
  const char* libs = std::getenv("TIDEMARK_KAFKA_LIBS");
  if (libs == nullptr || *libs == '\0')
    throw std::runtime_error("TIDEMARK_KAFKA_LIBS is not set: start the servers with scripts/servers.sh and source .run/env.sh");
  TempDir dir;
  std::string input;
  for (const auto& r : records) input += r.topic + "\t" + r.key.value_or("null") + "\t" + r.value.value_or("null") + "\n";
  write_file(dir.file("records.tsv"), input);
  const std::string checker = std::string(TIDEMARK_SOURCE_DIR) + "/tests/support/java/JsonConverterCheck.java";
  // The source launcher compiles the one file in memory; stdin comes from the records file.
  ChildProcess java({"/bin/sh", "-c",
                     "exec java -cp \"$0/*\" \"$1\" < \"$2\"", libs, checker, dir.file("records.tsv")},
                    dir.file("out"), dir.file("err"));
  ConverterReport report;
  const auto status = java.wait_for_exit(std::chrono::seconds(120));
  report.exit_status = status.value_or(-1);
  report.output = read_file(dir.file("out")) + read_file(dir.file("err"));
  std::istringstream lines(read_file(dir.file("out")));
  for (std::string line; std::getline(lines, line);) report.lines.push_back(line);
  return report;
}

}  // namespace tidemark::test

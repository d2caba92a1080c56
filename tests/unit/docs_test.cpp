// The configuration reference in docs/ is generated from the settings table; keep them equal.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/settings_reference.hpp"

TEST(Docs, ConfigurationReferenceMatchesTheSettingsTable) {
  std::ifstream in(std::string(TIDEMARK_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(in) << "docs/configuration.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), tidemark::settings_reference_markdown())
      << "regenerate it: build/tidemark config-reference > docs/configuration.md";
}

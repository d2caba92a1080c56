#include <gtest/gtest.h>
#include "config/config_loader.hpp"
TEST(Placeholder, Builds) { EXPECT_TRUE(true); }

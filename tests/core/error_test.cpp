// excerpt(): input quoted in an error line stays one readable line.
#include "core/error.h"

#include <gtest/gtest.h>

namespace evenfeed {
namespace {

TEST(Excerpt, KeepsTextAndUtf8EscapesControlsAndInvalidBytes) {
  EXPECT_EQ(excerpt("photos/a b.jpg 3"), "photos/a b.jpg 3");
  EXPECT_EQ(excerpt("caf\xc3\xa9/\xe6\x97\xa5.jpg"), "caf\xc3\xa9/\xe6\x97\xa5.jpg");
  EXPECT_EQ(excerpt("a\tb\x1b[31m\x7f"), "a\\x09b\\x1b[31m\\x7f");
  // A lone continuation byte, a cut-off sequence, a C1 control in UTF-8.
  EXPECT_EQ(excerpt("\x80x\xe6\x97"), "\\x80x\\xe6\\x97");
  EXPECT_EQ(excerpt("\xc2\x9b"), "\\xc2\\x9b");
}

TEST(Excerpt, CutsLongTextAtTheLimit) {
  EXPECT_EQ(excerpt(std::string(100, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(excerpt(std::string(10, 'x'), 10), std::string(10, 'x'));
  EXPECT_EQ(excerpt(""), "");
}

}  // namespace
}  // namespace evenfeed

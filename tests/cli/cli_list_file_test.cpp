// The --list file's rules on bytes alone (parse_list_text, src/cli/list_file.h), as the fuzz
// target tests/fuzz/fuzz_list_file.cpp checks them on any input; the file-reading side is in
// cli_options_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/list_file.h"
#include "cli/options.h"

namespace ndconv::cli {
namespace {

using Paths = std::vector<std::string>;

TEST(ListText, OnePathALineCommentsAndEmptyLinesSkippedOneCrDropped) {
  EXPECT_EQ(parse_list_text("", "l"), Paths{});
  EXPECT_EQ(parse_list_text("a.nii\nb.nii", "l"), (Paths{"a.nii", "b.nii"}));
  EXPECT_EQ(parse_list_text("# x\r\n\r\n\n a b.nii \r\n#c\n", "l"), (Paths{" a b.nii "}));
  EXPECT_EQ(parse_list_text("a\rb.nii\nc.nii\r\r\n", "l"), (Paths{"a\rb.nii", "c.nii\r"}));
  const std::string long_line(70000, 'x');
  EXPECT_EQ(parse_list_text(long_line + "\n" + long_line, "l"), (Paths{long_line, long_line}));
}

TEST(ListText, ALineHoldingANulIsRefusedByItsNumber) {
  for (const std::string& text :
       {std::string("a\n\nb\0c\n", 7), std::string("a\n\n#\0\n", 6), std::string("a\n\n\0", 4)}) {
    try {
      (void)parse_list_text(text, "list.txt");
      ADD_FAILURE() << "accepted a NUL byte";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--list: list.txt: line 3 holds a NUL byte; a path cannot");
    }
  }
}

}  // namespace
}  // namespace ndconv::cli

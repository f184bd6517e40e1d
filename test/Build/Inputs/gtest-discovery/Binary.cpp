#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

// Runs before main, as a binary's dynamic loading and static constructors
// do: leaves its marker, then starts slowly or dies where asked to.
static const int started = [] {
  if (FILE *marker = std::fopen(MARKER, "a"))
    std::fclose(marker);
#if defined(BINARY_slow)
  sleep(30);
#elif defined(BINARY_broken)
  std::fprintf(stderr, "error while loading shared libraries: libmissing.so\n");
  std::exit(3);
#endif
  return 0;
}();

TEST(Discovery, First) { EXPECT_EQ(started, 0); }
TEST(Discovery, Second) { EXPECT_EQ(started, 0); }

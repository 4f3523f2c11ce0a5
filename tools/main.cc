#include <cstdio>

int main(int argc, char** argv) {
  std::fprintf(stderr, "usage: amem <command> [options]\n");
  return 2;
}

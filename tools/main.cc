// amem: the command line (tools/cli/command.h describes how commands are added).
#include "tools/cli/run.h"

int main(int argc, char** argv) { return amem::cli::RunCli(argc, argv); }

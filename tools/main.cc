// amem: the command line (tools/command.h describes how commands are added).
#include "tools/command.h"

int main(int argc, char** argv) { return amem::cli::RunCli(argc, argv); }

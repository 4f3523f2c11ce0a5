// The entry point of the `amem` command line, apart from how commands are declared
// (tools/cli/command.h), so that main() compiles without CLI11 or JSON.
#ifndef AMEM_TOOLS_CLI_RUN_H_
#define AMEM_TOOLS_CLI_RUN_H_

namespace amem::cli {

// Builds the whole `amem` app, parses argv, runs the command and returns the exit
// code; writes stdout/stderr. main() is just this.
int RunCli(int argc, char** argv);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_RUN_H_

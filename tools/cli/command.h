// The CLI's command registry: each subcommand lives in its own file
// (`<name>_command.cc`) and exposes one `Add<Name>Command` function that
// defines its CLI11 options and, when the subcommand is chosen, stores the
// action to run. main() parses, runs the action and turns a non-OK Status into
// a message on stderr and exit code 1. Commands include only include/strata/.
#ifndef STRATA_TOOLS_CLI_COMMAND_H_
#define STRATA_TOOLS_CLI_COMMAND_H_

#include <functional>

#include <CLI/CLI.hpp>

#include "strata/status.h"

namespace strata::cli {

// What a chosen subcommand does; set by its parse callback.
using CommandAction = std::function<Status()>;

void AddGenCommand(CLI::App& root, CommandAction* action);
void AddGtCommand(CLI::App& root, CommandAction* action);
void AddRecallCommand(CLI::App& root, CommandAction* action);
void AddInfoCommand(CLI::App& root, CommandAction* action);
void AddIobenchCommand(CLI::App& root, CommandAction* action);
void AddBuildCommand(CLI::App& root, CommandAction* action);
void AddDecoupleCommand(CLI::App& root, CommandAction* action);
void AddSearchCommand(CLI::App& root, CommandAction* action);
void AddBenchCommand(CLI::App& root, CommandAction* action);
void AddCollectionCommand(CLI::App& root, CommandAction* action);
void AddServeCommand(CLI::App& root, CommandAction* action);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_COMMAND_H_

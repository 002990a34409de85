// `strata`: the command-line front end. Each subcommand is defined in its own
// <name>_command.cc (see command.h); main parses, runs the chosen action and
// maps a failed Status to a message on stderr and exit status 1.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "command.h"

int main(int argc, char** argv) {
  CLI::App app{"Strata: SSD-resident vector search engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0");
  strata::cli::CommandAction action;
  strata::cli::AddGenCommand(app, &action);
  strata::cli::AddGtCommand(app, &action);
  strata::cli::AddRecallCommand(app, &action);
  strata::cli::AddInfoCommand(app, &action);
  strata::cli::AddIobenchCommand(app, &action);
  strata::cli::AddBuildCommand(app, &action);
  strata::cli::AddDecoupleCommand(app, &action);
  strata::cli::AddSearchCommand(app, &action);
  strata::cli::AddBenchCommand(app, &action);
  strata::cli::AddCollectionCommand(app, &action);
  strata::cli::AddServeCommand(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // prints help or the parse error (unknown option, bad value)
  }
  if (!action) return 0;
  const strata::Status status = action();
  if (!status.ok()) {
    std::fprintf(stderr, "strata: error: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

import AuthEmulator

CLI.mainThenExit(Array(CommandLine.arguments.dropFirst()))

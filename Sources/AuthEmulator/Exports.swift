import EmulatorConfiguration

// The library's public names for what it is started with, which EmulatorConfiguration now
// declares: an app that imports AuthEmulator keeps `EmulatorOptions` and `EmulatorError`.
public typealias EmulatorOptions = EmulatorConfiguration.EmulatorOptions
public typealias EmulatorError = EmulatorConfiguration.EmulatorError

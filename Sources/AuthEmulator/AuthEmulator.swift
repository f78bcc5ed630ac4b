// AuthEmulator module.

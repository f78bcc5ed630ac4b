// AuthStore module.

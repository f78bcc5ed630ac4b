import AuthCrypto

/// Not measured yet.
func benchEdDSA(_ arguments: [String]) -> Never {
    fail("benchEdDSA: not implemented yet")
}

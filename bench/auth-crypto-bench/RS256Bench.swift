import AuthCrypto

/// Not measured yet.
func benchRS256(_ arguments: [String]) -> Never {
    fail("benchRS256: not implemented yet")
}

import AuthCrypto

/// Not measured yet.
func benchES256(_ arguments: [String]) -> Never {
    fail("benchES256: not implemented yet")
}

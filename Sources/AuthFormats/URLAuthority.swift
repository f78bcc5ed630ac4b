/// The plain `scheme://authority` split GoTrue's origin and host comparisons read (the site URL's
/// host as a TOTP issuer, the WebAuthn origin derived from it, `IsOriginInHaystack`): the text
/// before the first `://`, and what follows it up to the first `/`, `?` or `#`, without the
/// userinfo (up to its last `@`). Nil when there is no `://`. Redirect checks never use it: they
/// need the two full readings above.
package enum URLAuthority {
    package static func split(_ url: String) -> (scheme: Substring, authority: Substring)? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let rest = url[separator.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return (url[..<separator.lowerBound], authority)
    }
}

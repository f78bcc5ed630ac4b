import Testing
@testable import EmulatorTools
@testable import GoTrue

// Redirect targets that parsers read differently. Expected decisions: GoTrue's
// `IsRedirectURLValid` after Go's `url.Parse` (internal/utilities/request.go, Go 1.26 net/url),
// made stricter where Go accepts a URL whose host a browser reads otherwise (WHATWG URL
// Standard §4.4); the browser hosts below are what the WHATWG basic URL parser gives.

/// `SITE_URL` on loopback, as `supabase start` sets it, with one allow-list glob.
private let localSite: RedirectPolicy = {
    var configuration = Configuration()
    configuration.siteURL = "http://localhost:3000"
    configuration.uriAllowList = ["https://app.example.com/**", "myapp://callback"]
    return RedirectPolicy(configuration: configuration)
}()

struct RedirectConfusionTests {
    /// (candidate, allowed, why)
    static let table: [(String, Bool, String)] = [
        // Plain cases.
        ("http://localhost:3000/welcome", true, "the site"),
        ("http://localhost:4000/x", true, "the site's loopback host on another port (RFC 8252 §7.3)"),
        ("https://app.example.com/callback", true, "allow-list glob"),
        ("myapp://callback", true, "allow-list glob, custom scheme"),
        ("https://evil.example/", false, "not allowed at all"),
        // Backslashes: a browser reads `\` as `/` in http(s) URLs, Go refuses it in userinfo and host.
        ("http://evil.example\\@127.0.0.1:3000/", false, "Go: invalid userinfo; browser host evil.example"),
        ("http://evil.example\\@localhost:3000/", false, "Go: invalid userinfo; browser host evil.example"),
        ("http://localhost:3000\\@evil.example/", false, "Go: invalid userinfo"),
        ("http://localhost:3000\\evil.example", false, "Go: port `3000\\evil.example` is not digits"),
        ("http://evil.example\\.localhost:3000/", false, "Go: `\\` is not a host character"),
        ("http:\\\\localhost:3000/", false, "Go: opaque `\\\\localhost…` has no host; browser host localhost"),
        ("http:\\\\evil.example\\@localhost:3000/", false, "Go: no host; browser host evil.example"),
        ("/\\evil.example", false, "relative: a browser resolves it to evil.example"),
        // Scheme-relative, relative and slash-shy forms.
        ("//evil.example/", false, "no scheme: resolved against the auth server"),
        ("//localhost:3000/", false, "no scheme: resolved against the auth server"),
        ("/welcome", false, "relative path"),
        ("http:/localhost:3000/", false, "Go: no host; browser host localhost"),
        ("http:localhost:3000", false, "Go: opaque; browser host localhost"),
        ("http:///evil.example/", false, "Go: empty host; browser host evil.example"),
        // `@` in every place: both readers take the host after the last `@` of the authority.
        ("http://evil.example@localhost:3000/", true, "userinfo evil.example, host localhost"),
        ("http://a@b@localhost:3000/", true, "userinfo `a@b`, host localhost for both"),
        ("http://localhost:3000@evil.example/", false, "host evil.example for both"),
        ("http://localhost:3000/@evil.example", true, "`@` in the path"),
        ("http://localhost:3000?@evil.example", true, "`@` in the query"),
        ("http://localhost:3000#@evil.example", true, "`@` in the fragment"),
        ("http://@localhost:3000/", true, "empty userinfo"),
        ("http://localhost:3000@/", false, "browser: credentials without a host"),
        // Tabs, newlines, CR: browsers strip them, Go refuses control characters.
        ("http://evil.example\t@localhost:3000/", false, "Go: control character"),
        ("http://local\thost:3000/", false, "Go: control character"),
        ("http://localhost:3000/\n", false, "Go: control character"),
        ("http://localhost:3000\r\n@evil.example/", false, "Go: control character"),
        ("http://localhost:3000/#\t", true, "Go does not check the fragment; the host is the same"),
        // Percent-encoded separators in the host: Go allows escapes only of non-ASCII bytes (RFC 3986 §3.2.2).
        ("http://evil.example%2flocalhost:3000/", false, "Go: %2f in host"),
        ("http://evil.example%40localhost:3000/", false, "Go: %40 in host"),
        ("http://evil.example%5clocalhost:3000/", false, "Go: %5c in host"),
        ("http://%6c%6fcalhost:3000/", false, "Go: escaped ASCII in host"),
        ("http://evil.example%5c@localhost:3000/", true, "escapes in userinfo are fine: host localhost"),
        ("http://localhost%2f@evil.example/", false, "host evil.example"),
        // IPv6 literals and zones.
        ("http://[::1]:3000/", true, "loopback literal"),
        ("http://[0:0:0:0:0:0:0:1]:5173/", true, "loopback literal, long form; browser [::1]"),
        ("http://[::ffff:127.0.0.1]/", true, "IPv4-mapped loopback (net.ParseIP); browser [::ffff:7f00:1]"),
        ("http://[::1%25eth0]:3000/", false, "zone: net.ParseIP refuses it, so does a browser"),
        ("http://[127.0.0.1]/", false, "Go 1.25.2+: brackets hold IPv6 only"),
        ("http://[::1]evil.example/", false, "Go: junk after `]`"),
        ("http://[::1/", false, "Go: missing `]`"),
        // Scheme case, IPv4 spellings, trailing dots.
        ("HTTP://localhost:3000/", true, "schemes are case-insensitive for both"),
        ("HTTP://EVIL.EXAMPLE\\@LOCALHOST:3000/", false, "Go: invalid userinfo"),
        ("http://LOCALHOST:3000/", false, "GoTrue compares hostnames case-sensitively"),
        ("http://0x7f.0.0.1:3000/", false, "browser 127.0.0.1, Go a name `0x7f.0.0.1`"),
        ("http://127.1:3000/", false, "browser 127.0.0.1, Go a name `127.1`"),
        ("http://127.000.0.1/", false, "browser 127.0.0.1 (octal parts), Go a name"),
        ("http://2130706433/", false, "GoTrue: digits-only host"),
        ("http://127.0.0.1.:3000/", false, "browser 127.0.0.1, Go a name with a trailing dot"),
        ("http://localhost.:3000/", false, "GoTrue: irregular hostname"),
        ("http://127.0.0.2:8080/", true, "127.0.0.0/8 is loopback"),
        ("http://0.0.0.0:3000/", false, "net.ParseIP: not loopback"),
        // Ports.
        ("http://localhost:03000/", true, "leading zero: port 3000 for both"),
        ("http://localhost:/", true, "empty port: none for both"),
        ("http://localhost:99999/", false, "browser: port out of range (Go accepts it)"),
        ("http://localhost:3000:80/", false, "Go 1.26: one port only"),
        ("http://localhost:3x/", false, "Go: port not digits"),
        ("http://:3000/", false, "empty host"),
        ("http:///", false, "empty host"),
        // Non-ASCII hosts: GoTrue's regular-hostname rule refuses them for http(s); a browser
        // would map full-width letters to `localhost` (UTS 46).
        ("http://ｌｏｃａｌｈｏｓｔ:3000/", false, "non-ASCII host"),
        ("http://lоcalhost:3000/", false, "Cyrillic о"),
        ("http://%ef%bd%8cocalhost:3000/", false, "escaped non-ASCII host"),
        // Script schemes and opaque URLs.
        ("javascript:alert(1)//localhost:3000", false, "no host, no glob"),
        ("myapp://callback\\@evil.example", false, "Go: invalid userinfo"),
        ("MYAPP://callback", false, "globs compare the text as written"),
    ]

    @Test(arguments: table.indices) func decision(_ index: Int) {
        let (candidate, allowed, why) = Self.table[index]
        #expect(localSite.isValid(candidate) == allowed, "\(candidate.debugDescription): \(why)")
    }

    @Test func refusedCandidatesFallBackToTheSite() {
        #expect(localSite.resolve("http://evil.example\\@127.0.0.1:3000/", nil) == "http://localhost:3000")
        #expect(localSite.resolve("http://evil.example\\@127.0.0.1:3000/", "http://127.0.0.1:5173/") == "http://127.0.0.1:5173/")
    }

    /// WHATWG URL Standard hosts (many of these forms are in web-platform-tests' urltestdata.json).
    @Test func browserHosts() {
        func host(_ text: String) -> String? { BrowserURL.parse(text).map(\.host.serialized) }
        #expect(host("http://evil.example\\@127.0.0.1:3000/") == "evil.example")
        #expect(host("http:\\\\evil.example\\@localhost/") == "evil.example")
        #expect(host("http:/x") == "x")
        #expect(host("HTTP://EXAMPLE.com./") == "example.com.")
        #expect(host("http://a%2Eb/") == "a.b")
        #expect(host("http://a%2fb/") == nil)
        #expect(host("http://0x7f.1/") == "127.0.0.1")
        #expect(host("http://0177.0.0.1/") == "127.0.0.1")
        #expect(host("http://4294967295/") == "255.255.255.255")
        #expect(host("http://4294967296/") == nil)
        #expect(host("http://1.2.3.4.5/") == nil)
        #expect(host("http://foo.09/") == nil)
        #expect(host("http://[0:0::1]/") == "[::1]")
        #expect(host("http://[1:0:0:2::3:0]/") == "[1::2:0:0:3:0]")
        #expect(host("http://[::127.0.0.1]/") == "[::7f00:1]")
        #expect(host("http://[::1%25eth0]/") == nil)
        #expect(host("http://a\t b/") == nil)
        #expect(host("http://a\tb/") == "ab")
        #expect(host("myapp://Call%62ack/x") == "Call%62ack")
        #expect(host("myapp://a\\b@c/") == "c")
        #expect(host("http://ｌｏｃａｌｈｏｓｔ/") == nil)  // UTS 46 is not implemented: refused
        #expect(BrowserURL.parse("http://localhost:80/")?.port == nil)
        #expect(BrowserURL.parse("http://localhost:0080/")?.port == nil)
        #expect(BrowserURL.parse("https://localhost:80/")?.port == 80)
        #expect(BrowserURL.parse("http://localhost:65536/") == nil)
        #expect(BrowserURL.parse("//evil.example") == nil)
    }

    /// Go's `url.Parse` (net/url, Go 1.26): what it refuses, and the host it reads.
    @Test func goParse() {
        func hostname(_ text: String) -> String? { GoParsedURL.parse(text)?.hostname }
        #expect(hostname("http://evil.example\\@127.0.0.1/") == nil)
        #expect(hostname("http://a@b@localhost:3000/") == "localhost")
        #expect(hostname("http://x/\t") == nil)
        #expect(hostname("http://x/#\t") == "x")
        #expect(hostname("http://a%2fb/") == nil)
        #expect(hostname("http://a%25b/") == "a%b")
        #expect(hostname("http://%e4%bd%a0/") == "你")
        #expect(hostname("http://[fe80::1%25en0]:8080/") == "fe80::1%en0")
        #expect(hostname("http://[fe80::1%25%0a]/") == nil)
        #expect(hostname("http://[1.2.3.4]/") == nil)
        #expect(hostname("http://[v1.x]/") == nil)
        #expect(hostname("http://[::1]:/") == "::1")
        #expect(hostname("http://h:80:80/") == nil)
        #expect(hostname("http://h:0099999/") == "h")
        #expect(hostname("http://h/%zz") == nil)
        #expect(hostname("http://h/#%zz") == nil)
        #expect(hostname("http://h<>/") == "h<>")
        #expect(hostname("http://h|/") == nil)
        #expect(hostname(":foo") == nil)
        #expect(hostname("a:b/c") == "")
        #expect(GoParsedURL.parse("HTTP://h")?.scheme == "http")
        #expect(GoParsedURL.parse("http:\\\\h")?.opaque == "\\\\h")
        #expect(GoParsedURL.parse("/a:b") != nil)
        #expect(GoParsedURL.parse("a/b:c") != nil)
        #expect(GoParsedURL.parse("ab:c/d")?.scheme == "ab")
        #expect(GoParsedURL.parse("1a:b") == nil)  // no scheme, and a colon in the first segment
    }

    /// OAuth 2.1 client registration (`validateRedirectURI`): Go's messages for what Go refuses;
    /// "invalid URL format" also for what a browser would read as another host.
    @Test func oauthClientRedirectURIs() {
        #expect(OAuthClients.redirectURIProblem("http://localhost:3000/cb") == nil)
        #expect(OAuthClients.redirectURIProblem("com.example.app://callback") == nil)
        #expect(OAuthClients.redirectURIProblem("http://localhost\\@evil.example/cb") == "invalid URL format")
        #expect(OAuthClients.redirectURIProblem("http://evil.example\\@localhost/cb") == "invalid URL format")
        #expect(OAuthClients.redirectURIProblem("http:\\\\localhost/cb") == "must have scheme and host")
        #expect(OAuthClients.redirectURIProblem("https://a.example/\tcb") == "invalid URL format")
        #expect(OAuthClients.redirectURIProblem("https://a.example:99999/cb") == "invalid URL format")
        #expect(OAuthClients.redirectURIProblem("https://0x7f.1/cb") == "invalid URL format")
        #expect(OAuthClients.redirectURIProblem("JavaScript://x/y") == "scheme 'javascript' is not allowed for security reasons")
        #expect(OAuthClients.redirectURIProblem("http://LOCALHOST/cb") == "HTTP scheme only allowed for localhost")
    }

    /// The fake providers' `redirect_uri`: absolute, Go-parseable, read alike by a browser.
    @Test func fakeProviderRedirects() {
        #expect(AuthorizationRequest.isAcceptableRedirect("http://127.0.0.1:54321/auth/v1/callback"))
        #expect(AuthorizationRequest.isAcceptableRedirect("com.example.app:/oauth2redirect"))
        #expect(!AuthorizationRequest.isAcceptableRedirect("http://evil.example\\@127.0.0.1:54321/auth/v1/callback"))
        #expect(!AuthorizationRequest.isAcceptableRedirect("http:\\\\evil.example/cb"))
        #expect(!AuthorizationRequest.isAcceptableRedirect("javascript:alert(1)"))
        #expect(!AuthorizationRequest.isAcceptableRedirect("myapp:"))
        #expect(!AuthorizationRequest.isAcceptableRedirect("/relative"))
    }
}

/// The allow list's globs as gobwas/glob (with `.` and `/` as separators) reads them.
struct AllowListGlobTests {
    @Test(arguments: [
        ("http://localhost:300[0-9]/**", "http://localhost:3005/x", true),
        ("http://localhost:300[0-9]/**", "http://localhost:300a/x", false),
        ("https://app[!0-9].example.com/*", "https://appx.example.com/cb", true),
        ("https://app[!0-9].example.com/*", "https://app7.example.com/cb", false),
        ("https://[ab]pp.example.com/*", "https://bpp.example.com/cb", true),
        ("https://[ab]pp.example.com/*", "https://cpp.example.com/cb", false),
        ("myapp://auth\\?cb", "myapp://auth?cb", true),
        ("myapp://auth\\?cb", "myapp://authxcb", false),
        ("myapp://auth?cb", "myapp://authxcb", true),
        ("https://{app,web}.example.com/*", "https://web.example.com/cb", true),
        ("https://{app,web}.example.com/*", "https://api.example.com/cb", false),
        ("https://*.example.com/*", "https://a.b.example.com/cb", false),
        ("https://**.example.com/*", "https://a.b.example.com/cb", true),
        // What gobwas cannot compile (GoTrue does not start with it) matches nothing here.
        ("https://app[0-9.example.com/*", "https://app1.example.com/cb", false),
        ("https://app[0-9x].example.com/*", "https://app1.example.com/cb", false),
        ("https://{app.example.com/*", "https://app.example.com/cb", false),
    ])
    func globs(pattern: String, candidate: String, allowed: Bool) {
        #expect(RedirectPolicy.Glob.matches(Array(pattern.utf8)[...], Array(candidate.utf8)[...]) == allowed)
    }
}

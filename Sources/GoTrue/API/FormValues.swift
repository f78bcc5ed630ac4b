import AuthHTTP

extension HTTPRequest {
    /// Whether Go's `Request.ParseForm` reads this request's body: a POST, PUT or PATCH whose
    /// media type (`mime.ParseMediaType`, case-insensitive) is
    /// `application/x-www-form-urlencoded`. It then consumes the body, so a handler that goes
    /// on to read JSON finds it empty.
    /// Compared byte by byte: every `/token` request asks, and the string operations this first
    /// used (split, trim, lowercase) cost ~20,000 instructions each time.
    var hasFormBody: Bool {
        guard method == "POST" || method == "PUT" || method == "PATCH", let contentType = headers["Content-Type"] else { return false }
        var bytes = Substring(contentType).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        let expected = Self.formMediaType
        guard bytes.count >= expected.count else { return false }
        var index = bytes.startIndex
        for byte in expected {
            let actual = bytes[index]
            // ASCII case folding: the media type has only letters and "/-" besides.
            guard actual == byte || (actual >= 0x41 && actual <= 0x5A && actual | 0x20 == byte) else { return false }
            index = bytes.index(after: index)
        }
        // Then nothing, or parameters after optional white space.
        let rest = bytes[index...].drop { $0 == 0x20 || $0 == 0x09 }
        return rest.isEmpty || rest.first == UInt8(ascii: ";")
    }

    private static let formMediaType: [UInt8] = Array("application/x-www-form-urlencoded".utf8)

    /// The body a handler decoding JSON finds. GoTrue's request logger runs on every route but
    /// `/health` and asks `GetReferrer` for the log line, whose `getRedirectTo` calls
    /// `ParseForm` unless a `redirect_to` header answers first (observability/request-logger.go,
    /// utilities/request.go): a form body is consumed before any handler runs, so a JSON
    /// document sent as `application/x-www-form-urlencoded` (`curl -d` without a content type)
    /// reads as empty, a 400 `bad_json`. Form values stay readable (`formItems`), as `r.Form`
    /// keeps them.
    var jsonBody: [UInt8] {
        hasFormBody && headers["redirect_to"] == nil ? [] : body
    }

    /// `r.Form` after `ParseForm`: the body's values first (when `hasFormBody`), then the
    /// query's, so `r.FormValue(name)` is the first item of that name.
    var formItems: [QueryItem] {
        guard hasFormBody else { return query }
        return RedirectURL.parseQuery(String(decoding: body, as: UTF8.self)) + query
    }

    /// Whether `Request.ParseForm` returns an error: the URL's query or a form body that
    /// `url.ParseQuery` refuses (a bad `%` escape, a `;` in a pair). The values it could read
    /// are still in `formItems`.
    var formParseFails: Bool {
        if let question = target.firstIndex(of: "?"), !RedirectURL.parsesCleanly(String(target[target.index(after: question)...])) {
            return true
        }
        return hasFormBody && !RedirectURL.parsesCleanly(String(decoding: body, as: UTF8.self))
    }

    /// `r.FormValue(name)`: "" when absent.
    func formValue(_ name: String) -> String {
        formItems.first { $0.name == name }?.value ?? ""
    }
}

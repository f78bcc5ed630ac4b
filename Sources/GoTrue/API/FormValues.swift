import AuthHTTP
import GoFormats

extension HTTPRequest {
    /// Whether Go's `Request.ParseForm` reads this request's body: a POST, PUT or PATCH whose
    /// media type (`mime.ParseMediaType`, case-insensitive) is
    /// `application/x-www-form-urlencoded`. It then consumes the body, so a handler that goes
    /// on to read JSON finds it empty.
    var hasFormBody: Bool {
        guard ["POST", "PUT", "PATCH"].contains(method), let contentType = headers["Content-Type"] else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { GoStrings.trimSpace($0) } ?? ""
        return mediaType.lowercased() == "application/x-www-form-urlencoded"
    }

    /// `r.Form` after `ParseForm`: the body's values first (when `hasFormBody`), then the
    /// query's, so `r.FormValue(name)` is the first item of that name.
    var formItems: [QueryItem] {
        guard hasFormBody else { return query }
        return RedirectURL.parseQuery(String(decoding: body, as: UTF8.self)) + query
    }

    /// `r.FormValue(name)`: "" when absent.
    func formValue(_ name: String) -> String {
        formItems.first { $0.name == name }?.value ?? ""
    }
}

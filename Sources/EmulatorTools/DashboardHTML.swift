import AuthHTTP
import AuthJSON
import GoFormats
import GoTrue

/// The dashboard's HTML toolkit: escaping, the page frame, and the stylesheet and script served
/// inline with every page, so the binary needs no asset files and the pages work offline.
enum DashboardHTML {
    /// Text and attribute values are escaped with one function: everything shown comes from
    /// users of the emulated app (emails, metadata, captured mail) and must never become markup.
    /// Go's `html.EscapeString`, the escaping GoTrue's own pages get from `html/template`.
    static func escape(_ text: String) -> String { GoHTML.escapeString(text) }

    /// Percent-encoding for a query value or path segment (RFC 3986 unreserved characters kept).
    static func urlEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// A whole number with a comma between each group of three digits ("100,001"), so a large
    /// count reads at a glance. Fixed rather than the locale's: the page is the same for every
    /// reader, and the server knows no reader's locale.
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }

    /// A count and its noun, singular for exactly one: "1 user", "100,001 users".
    static func counted(_ number: Int, _ singular: String, plural: String? = nil) -> String {
        grouped(number) + " " + (number == 1 ? singular : plural ?? singular + "s")
    }

    /// A query string from name/value pairs, empty values left out.
    static func query(_ items: [(String, String)]) -> String {
        let parts = items.filter { !$0.1.isEmpty }.map { urlEncode($0.0) + "=" + urlEncode($0.1) }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    /// JSON for reading: indented two spaces per level (or on one line), keys in stored order,
    /// and unlike the wire format `<`, `>` and `&` left as they are (the page escapes them).
    static func pretty(_ value: JSON, level: Int = 0, compact: Bool = false) -> String {
        let pad = compact ? "" : String(repeating: "  ", count: level + 1)
        let closing = compact ? "" : String(repeating: "  ", count: level)
        let newline = compact ? "" : "\n"
        let separator = compact ? ", " : ",\n"
        switch value {
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[" + newline + items.map { pad + pretty($0, level: level + 1, compact: compact) }.joined(separator: separator)
                + newline + closing + "]"
        case .object(let object):
            if object.isEmpty { return "{}" }
            return "{" + newline + object.map { pad + quoted($0.key) + ": " + pretty($0.value, level: level + 1, compact: compact) }
                .joined(separator: separator) + newline + closing + "}"
        case .string(let text):
            return quoted(text)
        default:
            return value.serialized()
        }
    }

    /// As `encoding/json` writes a string, `<`, `>` and `&` kept: the page escapes them as HTML.
    static func quoted(_ text: String) -> String { GoJSON.quote(text, escapeHTML: false) }

    /// The hidden field every state-changing form carries (checked against the cookie).
    static func csrfField(_ token: String) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(token))\">"
    }

    /// A one-button POST form.
    /// `accessibleLabel` names the button for screen readers when its text relies on what sits
    /// beside it ("Turn off" next to "Email auto-confirm").
    static func button(_ action: String, _ label: String, csrf: String, style: String = "", confirm: String? = nil,
                       fields: [(String, String)] = [], accessibleLabel: String? = nil) -> String {
        var html = "<form method=\"post\" action=\"\(escape(action))\" class=\"inline\""
        if let confirm { html += " data-confirm=\"\(escape(confirm))\"" }
        html += ">" + csrfField(csrf)
        for (name, value) in fields { html += "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">" }
        html += "<button type=\"submit\"\(style.isEmpty ? "" : " class=\"\(style)\"")"
        if let accessibleLabel { html += " aria-label=\"\(escape(accessibleLabel))\"" }
        html += ">\(escape(label))</button></form>"
        return html
    }

    /// The opening of a scrolling table up to its body: the column headings in one row.
    static func tableStart(_ columns: [String], class tableClass: String? = nil) -> String {
        "<div class=\"scroll\"><table\(tableClass.map { " class=\"\(escape($0))\"" } ?? "")><thead><tr>"
            + columns.map { "<th scope=\"col\">\(escape($0))</th>" }.joined() + "</tr></thead><tbody>"
    }

    /// Closes what `tableStart` opened.
    static let tableEnd = "</tbody></table></div>"

    /// A listing of the user page: its heading, `empty` (muted) when there is nothing to list,
    /// else a table of `columns` whose rows `rows` writes.
    static func listing(_ heading: String, isEmpty: Bool, empty: String = "None.", columns: [String],
                        class tableClass: String? = nil, rows: () -> String) -> String {
        "<h2>\(heading)</h2>" + (isEmpty ? "<p class=\"muted\">\(empty)</p>" : tableStart(columns, class: tableClass) + rows() + tableEnd)
    }

    /// A value with a copy button (the script copies the element's text).
    static func copyable(_ id: String, _ value: String, code: Bool = true) -> String {
        let inner = code ? "<code id=\"\(escape(id))\">\(escape(value))</code>" : "<span id=\"\(escape(id))\">\(escape(value))</span>"
        return "<span class=\"copy\">\(inner)<button type=\"button\" class=\"small\" data-copy=\"\(escape(id))\">Copy</button></span>"
    }

    /// The tabs, each a path below the dashboard's root.
    static let navigation: [(view: String, path: String, label: String)] = [
        ("users", "", "Users"),
        ("tokens", "/tokens", "Tokens"),
        ("mailbox", "/mailbox", "Mailbox"),
        ("journal", "/journal", "Journal"),
        ("scenarios", "/scenarios", "Scenarios"),
        ("settings", "/settings", "Settings"),
    ]

    /// The frame around every page. `view` selects the highlighted tab and what the live script
    /// polls; `root` is where the dashboard is, as the browser addresses it (see
    /// `RequestContext.dashboardRoot`); `stamp` is the state the page was rendered from (the
    /// script reloads when it moves); `live` false leaves the page still. `projects` feeds the
    /// header's project switcher (shown only when there are several); `clock` is the header's
    /// virtual-clock bar.
    static func page(title: String, view: String, root: String, stamp: String, liveQuery: String = "", live: Bool = true,
                     notice: String? = nil, error: String? = nil, navigation showNavigation: Bool = true,
                     projects: [Dashboard.ProjectLink] = [], clock: String = "", body: String) -> String {
        let switcher = projectSwitcher(projects)
        // With several projects, a browser's tabs tell them apart by the page title too.
        let own = switcher.isEmpty ? nil : projects.first(where: \.current)
        let titled = own.map { title + " · " + $0.ref } ?? title
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <link rel="icon" href="data:,">
            <title>\(escape(titled)) · auth emulator</title>
            <style>\(css)\(switcher.isEmpty ? "" : projectsCSS)</style></head>
            <body data-view="\(escape(view))" data-stamp="\(escape(stamp))" data-live="\(live ? escape(root + "/live?view=" + urlEncode(view) + liveQuery) : "")">
            <a class="skip" href="#main">Skip to content</a>
            <header><span class="brand">auth emulator</span>
            """
        html += switcher
        if showNavigation {
            html += "<nav aria-label=\"Dashboard\">"
            for item in navigation {
                let current = item.view == view || (view == "user" && item.view == "users")
                html += "<a href=\"\(escape(root + item.path))\"\(current ? " aria-current=\"page\"" : "")>\(item.label)</a>"
            }
            html += "</nav>"
        }
        html += clock
        html += "</header><main id=\"main\" tabindex=\"-1\">"
        if let notice, !notice.isEmpty { html += "<p class=\"notice\" role=\"status\">\(escape(notice))</p>" }
        if let error, !error.isEmpty { html += "<p class=\"error\" role=\"alert\">\(escape(error))</p>" }
        html += body
        html += "</main><script>\(script)</script></body></html>"
        return html
    }

    /// The header's project switcher, when the server hosts several projects: each in the order
    /// given, the page's own named and marked (not a link: the page is already there), every
    /// other a link to its dashboard. Those paths are the server's, from its root, so they are
    /// used as given, never under this page's mount. Nothing for one project or none.
    static func projectSwitcher(_ projects: [Dashboard.ProjectLink]) -> String {
        guard projects.count > 1 else { return "" }
        var html = "<nav class=\"projects\" aria-label=\"Projects\"><span class=\"muted\">Project</span>"
        for project in projects {
            html += project.current
                ? "<span aria-current=\"true\">\(escape(project.ref))</span>"
                : "<a href=\"\(escape(project.path))\">\(escape(project.ref))</a>"
        }
        return html + "</nav>"
    }

    static func response(_ html: String, status: Int = 200, headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = extra
        headers["Content-Type"] = "text/html; charset=utf-8"
        // Pages show keys and personal data: never cached, never framed by another site.
        headers["Cache-Control"] = "no-store"
        headers["X-Content-Type-Options"] = "nosniff"
        headers["X-Frame-Options"] = "DENY"
        headers["Referrer-Policy"] = "no-referrer"
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// Post/Redirect/Get: 303 so a reload does not repeat the action.
    static func redirect(_ location: String, status: Int = 303) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Location"] = location
        headers["Cache-Control"] = "no-store"
        return HTTPResponse(status: status, headers: headers)
    }

    static let css = """
        :root{--bg:#fff;--fg:#1c1e21;--muted:#5f6670;--line:#d9dde3;--panel:#f5f7f9;--accent:#1f7a4d;--accent-fg:#fff;\
        --danger:#b42318;--notice:#e7f5ec;--error:#fdecea;--code:#eef1f4}
        @media (prefers-color-scheme:dark){:root{--bg:#14161a;--fg:#e6e8eb;--muted:#9aa3ad;--line:#2e333a;--panel:#1c1f24;\
        --accent:#3ecf8e;--accent-fg:#0b1410;--danger:#f97066;--notice:#16301f;--error:#3a1714;--code:#23272e}}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
        .brand{font-weight:600}
        nav{display:flex;flex-wrap:wrap;gap:.25rem}
        nav a{padding:.3rem .6rem;border-radius:6px;color:var(--fg);text-decoration:none}
        nav a[aria-current=page]{background:var(--accent);color:var(--accent-fg)}
        main{padding:1rem;max-width:1200px;margin:0 auto;outline:none}
        body[data-view=users] main,body[data-view=journal] main{max-width:none}
        .clock{display:flex;flex-wrap:wrap;align-items:center;gap:.35rem;margin-left:auto;font-size:.85rem}
        .clock form{display:inline-flex;gap:.25rem;align-items:center}
        .clock input{padding:.1rem .3rem;font-size:.8rem}
        .clock button{padding:.05rem .45rem;font-size:.8rem}
        label.check{flex-direction:row;align-items:center;gap:.4rem;color:var(--fg)}
        textarea.short{min-height:5rem}
        h1{font-size:1.35rem;margin:.2rem 0 .8rem;overflow-wrap:anywhere}
        h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
        a{color:var(--accent)}
        a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
        .skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:var(--bg);padding:.3rem;z-index:2}
        .scroll{overflow-x:auto;border:1px solid var(--line);border-radius:8px}
        table{border-collapse:collapse;width:100%;font-size:.9rem}
        th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top;white-space:nowrap}
        td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:10rem}
        table.sessions tr.has-detail td{border-bottom:0;padding-bottom:.1rem}
        table.sessions tr.detail td{white-space:normal;overflow-wrap:anywhere;font-size:.8rem;padding-top:0}
        table.sessions td.ip{white-space:normal;overflow-wrap:anywhere;min-width:7rem;max-width:12rem}
        th{background:var(--panel);font-weight:600}
        tr:last-child td{border-bottom:0}
        code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
        code{background:var(--code);padding:.05rem .3rem;border-radius:4px;overflow-wrap:anywhere}
        pre{background:var(--code);padding:.7rem;border-radius:8px;overflow:auto;max-height:28rem;white-space:pre}
        pre.snippet{white-space:pre-wrap;overflow-wrap:anywhere}
        form.inline{display:inline}
        form.bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0 1rem}
        label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted);gap:.15rem}
        input,select,textarea{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.35rem .5rem;max-width:100%}
        textarea{width:100%;min-height:10rem;font-family:ui-monospace,monospace;font-size:.85rem}
        button{font:inherit;cursor:pointer;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);border-radius:6px;padding:.35rem .75rem}
        button.secondary{background:transparent;color:var(--accent)}
        button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
        button.small{padding:.05rem .45rem;font-size:.8rem;margin-left:.35rem;background:transparent;color:var(--accent)}
        .actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 1rem}
        .notice,.error{padding:.6rem .8rem;border-radius:8px}
        .notice{background:var(--notice)}.error{background:var(--error);color:var(--fg);border-left:4px solid var(--danger)}
        .muted{color:var(--muted)}
        .badge{display:inline-block;padding:0 .4rem;border-radius:999px;border:1px solid var(--line);font-size:.78rem;margin-right:.2rem}
        .badge.bad{border-color:var(--danger);color:var(--danger)}.badge.good{border-color:var(--accent);color:var(--accent)}
        .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr));gap:1rem}
        .card{border:1px solid var(--line);border-radius:10px;padding:.8rem;background:var(--panel);min-width:0}
        .card h3{margin:0 0 .4rem;font-size:1rem;overflow-wrap:anywhere}
        dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .8rem;margin:0}
        dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere;min-width:0}
        .otp{font-size:1.8rem;letter-spacing:.2em;font-weight:700;font-family:ui-monospace,monospace}
        .link{display:inline-block;margin:.3rem 0;overflow-wrap:anywhere;font-weight:600}
        iframe{width:100%;height:22rem;border:1px solid var(--line);border-radius:8px;background:#fff}
        .copy{display:inline-flex;align-items:center;max-width:100%;min-width:0}.copy code{min-width:0}
        button{white-space:nowrap;flex:none}
        @media (max-width:520px){dl.stack{grid-template-columns:1fr;gap:.1rem}dl.stack dd{margin-bottom:.5rem}}
        .pager{display:flex;gap:1rem;align-items:center;margin:.7rem 0}
        .status-2{color:var(--accent)}.status-4,.status-5,.status-none{color:var(--danger)}
        """

    /// The switcher's own rules, sent only with a switcher: a page of a lone project is the same
    /// page it was before projects could be several.
    static let projectsCSS = """

        .projects{align-items:center;font-size:.9rem}
        .projects span[aria-current]{padding:.3rem .6rem;border:1px solid var(--accent);border-radius:6px;font-weight:600}
        """

    /// Live updates by short polling: every 2 s (while the tab is visible) the page asks
    /// `/emulator/live` for a small stamp of what it shows and, when it moved, fetches itself
    /// and swaps `<main>`. Nothing holds a connection open, so no worker thread is tied up. It
    /// never swaps while the user is typing into the page, and adds copy buttons and confirms.
    static let script = """
        (function(){
        var body=document.body;
        function busy(){var a=document.activeElement;if(a&&a.closest&&a.closest('main')&&/^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName))return true;
        var t=document.querySelectorAll('main textarea');for(var i=0;i<t.length;i++){if(t[i].value!==t[i].defaultValue)return true}return false}
        function tick(){if(!body.dataset.live||document.hidden||busy())return;
        fetch(body.dataset.live,{credentials:'same-origin',cache:'no-store'}).then(function(r){return r.ok?r.json():null}).then(function(j){
        if(!j||j.stamp===body.dataset.stamp)return;
        return fetch(location.href,{credentials:'same-origin',cache:'no-store'}).then(function(r){return r.text()}).then(function(html){
        var doc=new DOMParser().parseFromString(html,'text/html');var m=doc.querySelector('main');if(!m||busy())return;
        document.querySelector('main').innerHTML=m.innerHTML;body.dataset.stamp=doc.body.dataset.stamp||j.stamp;});}).catch(function(){});}
        setInterval(tick,2000);
        document.addEventListener('click',function(e){var b=e.target.closest&&e.target.closest('[data-copy]');if(!b)return;
        var el=document.getElementById(b.dataset.copy);if(!el)return;var text=el.textContent;
        function done(){var o=b.textContent;b.textContent='Copied';setTimeout(function(){b.textContent=o},1200)}
        if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done)}else{
        var r=document.createRange();r.selectNodeContents(el);var s=getSelection();s.removeAllRanges();s.addRange(r);
        try{document.execCommand('copy');done()}catch(_){}}});
        document.addEventListener('submit',function(e){var f=e.target;if(f.dataset&&f.dataset.confirm&&!confirm(f.dataset.confirm))e.preventDefault()});
        setInterval(function(){var all=document.querySelectorAll('[data-clock-offset]');for(var i=0;i<all.length;i++){var c=all[i];
        if(c.dataset.frozen==='true')continue;var d=new Date(Date.now()+parseFloat(c.dataset.clockOffset)*1000);
        c.textContent=d.toISOString().replace(/\\.\\d+Z$/,'Z')}},1000);
        })();
        """
}

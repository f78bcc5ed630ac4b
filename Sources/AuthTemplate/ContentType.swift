/// html/template's content types, here only to classify attributes (attr.go).
enum ContentType {
    case plain, css, html, htmlAttr, js, jsStr, url, srcset, unsafe
}

private let attrTypeMap: [String: ContentType] = [
    "accept": .plain, "accept-charset": .unsafe, "action": .url, "alt": .plain, "archive": .url, "async": .unsafe,
    "autocomplete": .plain, "autofocus": .plain, "autoplay": .plain, "background": .url, "border": .plain,
    "checked": .plain, "cite": .url, "challenge": .unsafe, "charset": .unsafe, "class": .plain, "classid": .url,
    "codebase": .url, "cols": .plain, "colspan": .plain, "content": .unsafe, "contenteditable": .plain,
    "contextmenu": .plain, "controls": .plain, "coords": .plain, "crossorigin": .unsafe, "data": .url,
    "datetime": .plain, "default": .plain, "defer": .unsafe, "dir": .plain, "dirname": .plain, "disabled": .plain,
    "draggable": .plain, "dropzone": .plain, "enctype": .unsafe, "for": .plain, "form": .unsafe, "formaction": .url,
    "formenctype": .unsafe, "formmethod": .unsafe, "formnovalidate": .unsafe, "formtarget": .plain, "headers": .plain,
    "height": .plain, "hidden": .plain, "high": .plain, "href": .url, "hreflang": .plain, "http-equiv": .unsafe,
    "icon": .url, "id": .plain, "ismap": .plain, "keytype": .unsafe, "kind": .plain, "label": .plain, "lang": .plain,
    "language": .unsafe, "list": .plain, "longdesc": .url, "loop": .plain, "low": .plain, "manifest": .url,
    "max": .plain, "maxlength": .plain, "media": .plain, "mediagroup": .plain, "method": .unsafe, "min": .plain,
    "multiple": .plain, "name": .plain, "novalidate": .unsafe, "open": .plain, "optimum": .plain, "pattern": .unsafe,
    "placeholder": .plain, "poster": .url, "profile": .url, "preload": .plain, "pubdate": .plain,
    "radiogroup": .plain, "readonly": .plain, "rel": .unsafe, "required": .plain, "reversed": .plain, "rows": .plain,
    "rowspan": .plain, "sandbox": .unsafe, "spellcheck": .plain, "scope": .plain, "scoped": .plain,
    "seamless": .plain, "selected": .plain, "shape": .plain, "size": .plain, "sizes": .plain, "span": .plain,
    "src": .url, "srcdoc": .html, "srclang": .plain, "srcset": .srcset, "start": .plain, "step": .plain,
    "style": .css, "tabindex": .plain, "target": .plain, "title": .plain, "type": .unsafe, "usemap": .url,
    "value": .unsafe, "width": .plain, "wrap": .plain, "xmlns": .url,
]

/// attrType: how an attribute's value is read, by its (lowercased) name: the table, then
/// `on*` as JavaScript and names containing src, uri or url as URLs; `data-` and XML
/// namespace prefixes are looked through.
func attrType(_ name: String) -> ContentType {
    var name = name
    if name.hasPrefix("data-") {
        name = String(name.dropFirst(5))
    } else if let colon = name.firstIndex(of: ":") {
        if name[..<colon] == "xmlns" { return .url }
        name = String(name[name.index(after: colon)...])
    }
    if let t = attrTypeMap[name] { return t }
    if name.hasPrefix("on") { return .js }
    if name.contains("src") || name.contains("uri") || name.contains("url") { return .url }
    return .plain
}

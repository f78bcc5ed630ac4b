import GoFormats

/// html/template's escaping pass (escape.go): walks the parse tree from the start of an HTML
/// document, follows the context through text, and appends to each action's pipeline the
/// escapers its context needs; text is rewritten where Go rewrites it (HTML, JS and CSS
/// comments removed, a '<' that starts no tag written as "&lt;"). Branches must end in the
/// same context, and a range body must be re-enterable, as in Go.
///
/// Go rewrites the tree in place once escaping succeeds; here the pass returns the rewritten
/// tree, and a range body's second pass (which only checks re-entry) is thrown away, as Go
/// discards its edits.
struct Escaper {
    private var rangeContexts: [(breaks: [Context], continues: [Context])] = []
    /// Range bodies already escaped, by the range's position: the context each was entered in,
    /// and what escaping it from there gave (`escapeRangeBody`).
    private var rangeBodies: [Int: [(entry: Context, context: Context, list: [Node])]] = [:]
    /// Nodes escaped so far, against `maxSteps`.
    private var steps = 0
    private var stepsExceeded: EscapeError?

    /// A bound on the escaping work, whatever the template: the memoized range bodies keep it
    /// linear in the template for every template measured, and this guards the rest (a
    /// template whose nested bodies each end in a context of their own). Go has no such bound.
    /// A 10 KiB email template escapes in a few thousand steps.
    static let maxSteps = 100_000

    static func escape(_ root: [Node], location: SourceLocation) -> Result<[Node], TemplateError> {
        var escaper = Escaper()
        let (c, nodes) = escaper.escapeList(Context(), root)
        if let err = escaper.stepsExceeded {
            return .failure(templateError(err, location))
        }
        if let err = c.err {
            return .failure(templateError(err, location))
        }
        if c.state != .stateText {
            let err = EscapeError(node: nil, line: 0, description: "ends in a non-text context: \(c.goDescription)")
            return .failure(templateError(err, location))
        }
        return .success(nodes)
    }

    private static func templateError(_ err: EscapeError, _ location: SourceLocation) -> TemplateError {
        if let node = err.node {
            let (line, column) = location.lineAndColumn(node.pos)
            return TemplateError(name: location.name, line: line, message: err.description, origin: .escape(column: column))
        }
        return TemplateError(name: location.name, line: err.line, message: err.description, origin: .escape(column: nil))
    }

    // MARK: Nodes

    private mutating func escape(_ c: Context, _ node: Node) -> (Context, Node) {
        steps += 1
        if steps > Escaper.maxSteps {
            // Every later call returns here, without descending: the error is reported whole.
            let err = stepsExceeded ?? EscapeError(
                node: nil, line: 0, description: "escaping the template takes more than \(Escaper.maxSteps) steps (the escaping limit)")
            stepsExceeded = err
            return (Context.error(err), node)
        }
        switch node {
        case .action(let a):
            let (c1, a1) = escapeAction(c, a)
            return (c1, .action(a1))
        case .breakLoop(let pos, let line):
            var c = c
            c.breakNode = (pos, line)
            rangeContexts[rangeContexts.count - 1].breaks.append(c)
            return (Context(state: .stateDead), node)
        case .continueLoop(let pos, let line):
            var c = c
            c.breakNode = (pos, line)
            rangeContexts[rangeContexts.count - 1].continues.append(c)
            return (Context(state: .stateDead), node)
        case .comment:
            return (c, node)
        case .branch(let b):
            let (c1, b1) = escapeBranch(c, b)
            return (c1, .branch(b1))
        case .text(let t):
            let (c1, t1) = escapeText(c, t)
            return (c1, .text(t1))
        }
    }

    private mutating func escapeList(_ c: Context, _ list: [Node]) -> (Context, [Node]) {
        var c = c
        var out: [Node] = []
        out.reserveCapacity(list.count)
        for (i, node) in list.enumerated() {
            let (c1, n1) = escape(c, node)
            c = c1
            out.append(n1)
            if c.state == .stateDead {
                out.append(contentsOf: list[(i + 1)...])
                break
            }
        }
        return (c, out)
    }

    private static let predefinedEscapers: Set<String> = ["html", "urlquery"]

    private mutating func escapeAction(_ c: Context, _ n: ActionNode) -> (Context, ActionNode) {
        if !n.pipe.decl.isEmpty {
            // An assignment prints nothing, so it needs no escaper.
            return (c, n)
        }
        var c = Escaper.nudge(c)
        // `html` and `urlquery` may only end a pipeline (and `html` may not feed an unquoted
        // attribute value): anywhere else their output would be escaped again.
        for (pos, cmd) in n.pipe.cmds.enumerated() {
            guard case .identifier(_, let ident) = cmd.args[0], Escaper.predefinedEscapers.contains(ident) else { continue }
            if pos < n.pipe.cmds.count - 1 || (c.state == .stateAttr && c.delim == .delimSpaceOrTagEnd && ident == "html") {
                let err = EscapeError(
                    node: NodeRefPosition(pos: n.pos), line: n.line,
                    description: "predefined escaper \(GoStrconv.quote(ident)) disallowed in template")
                return (Context.error(err), n)
            }
        }
        var s: [String] = []
        switch c.state {
        case .stateError:
            return (c, n)
        case .stateURL, .stateCSSDqStr, .stateCSSSqStr, .stateCSSDqURL, .stateCSSSqURL, .stateCSSURL:
            switch c.urlPart {
            case .urlPartNone, .urlPartPreQuery:
                if c.urlPart == .urlPartNone { s.append("_html_template_urlfilter") }
                switch c.state {
                case .stateCSSDqStr, .stateCSSSqStr: s.append("_html_template_cssescaper")
                default: s.append("_html_template_urlnormalizer")
                }
            case .urlPartQueryOrFrag:
                s.append("_html_template_urlescaper")
            case .urlPartUnknown:
                let err = EscapeError(
                    node: NodeRefPosition(pos: n.pos), line: n.line,
                    description: "\(n) appears in an ambiguous context within a URL")
                return (Context.error(err), n)
            }
        case .stateJS:
            s.append("_html_template_jsvalescaper")
            // After a value, '/' divides.
            c.jsCtx = .jsCtxDivOp
        case .stateJSDqStr, .stateJSSqStr:
            s.append("_html_template_jsstrescaper")
        case .stateJSTmplLit:
            s.append("_html_template_jstmpllitescaper")
        case .stateMetaContent:
            // Only the attribute escaper, which the delimiter chooses below.
            break
        case .stateMetaContentURL:
            // A URL a meta refresh would load: filtered like any other, but not normalized.
            s.append("_html_template_urlfilter")
        case .stateJSRegexp:
            s.append("_html_template_jsregexpescaper")
        case .stateCSS:
            s.append("_html_template_cssvaluefilter")
        case .stateText:
            s.append("_html_template_htmlescaper")
        case .stateRCDATA:
            s.append("_html_template_rcdataescaper")
        case .stateAttr:
            // Only the attribute escaper, which the delimiter chooses below.
            break
        case .stateAttrName, .stateTag:
            c.state = .stateAttrName
            s.append("_html_template_htmlnamefilter")
        case .stateSrcset:
            s.append("_html_template_srcsetescaper")
        default:
            if c.state.isComment { s.append("_html_template_commentescaper") }
        }
        switch c.delim {
        case .delimNone: break
        case .delimSpaceOrTagEnd: s.append("_html_template_nospaceescaper")
        default: s.append("_html_template_attrescaper")
        }
        var edited = n
        Escaper.ensurePipelineContains(&edited.pipe, s)
        return (c, edited)
    }

    // MARK: Pipelines

    private static let equivEscapers: [String: String] = [
        "_html_template_attrescaper": "html", "_html_template_htmlescaper": "html", "_html_template_rcdataescaper": "html",
        "_html_template_urlescaper": "urlquery", "_html_template_urlnormalizer": "urlquery",
    ]

    private static let redundantFuncs: [String: Set<String>] = [
        "_html_template_commentescaper": ["_html_template_attrescaper", "_html_template_htmlescaper"],
        "_html_template_cssescaper": ["_html_template_attrescaper"],
        "_html_template_jsregexpescaper": ["_html_template_attrescaper"],
        "_html_template_jsstrescaper": ["_html_template_attrescaper"],
        "_html_template_jstmpllitescaper": ["_html_template_attrescaper"],
        "_html_template_urlescaper": ["_html_template_urlnormalizer"],
    ]

    private static func normalizeEscFn(_ e: String) -> String { equivEscapers[e] ?? e }

    private static func identifier(_ cmd: CommandNode) -> String? {
        if case .identifier(_, let name) = cmd.args[0] { return name }
        return nil
    }

    /// appendCmd: leaves out an escaper made redundant by the one before it.
    private static func appendCmd(_ cmds: inout [CommandNode], _ cmd: CommandNode) {
        if let lastCmd = cmds.last, let last = identifier(lastCmd), let next = identifier(cmd),
            redundantFuncs[last]?.contains(next) == true
        {
            return
        }
        cmds.append(cmd)
    }

    private static func newIdentCmd(_ name: String, _ pos: Int) -> CommandNode {
        // Go leaves the command's own position at 0 and gives the identifier the pipeline's.
        CommandNode(pos: 0, args: [.identifier(pos: pos, name: name)])
    }

    /// ensurePipelineContains: the escapers `s` appended to the pipeline, reusing a final
    /// `html` or `urlquery` the template already has where it is equivalent.
    static func ensurePipelineContains(_ p: inout PipeNode, _ s: [String]) {
        if s.isEmpty { return }
        var s = s
        var cmds = p.cmds
        var pipelineLen = cmds.count
        if pipelineLen > 0, let esc = identifier(cmds[pipelineLen - 1]), predefinedEscapers.contains(esc) {
            if cmds.count == 1 && cmds[0].args.count > 1 {
                // "{{html x}}" is "{{_eval_args_ x | html}}", so the arguments are joined as
                // html's own evaluation joins them before the escapers that follow.
                cmds[0].args[0] = .identifier(pos: cmds[0].args[0].pos, name: "_eval_args_")
                appendCmd(&cmds, newIdentCmd(esc, p.pos))
                pipelineLen += 1
            }
            // An escaper doing what the template's own html or urlquery does is replaced by
            // it, so that the value is not escaped twice.
            var dup = false
            for i in s.indices where normalizeEscFn(esc) == normalizeEscFn(s[i]) {
                s[i] = esc
                dup = true
            }
            if dup {
                // It moves to where the list puts it.
                pipelineLen -= 1
            }
        }
        var newCmds = Array(cmds[0..<pipelineLen])
        var inserted: Set<String> = []
        for cmd in newCmds {
            if let name = identifier(cmd) { inserted.insert(normalizeEscFn(name)) }
        }
        for name in s where !inserted.contains(normalizeEscFn(name)) {
            appendCmd(&newCmds, newIdentCmd(name, p.pos))
        }
        p.cmds = newCmds
    }

    // MARK: Contexts

    static func nudge(_ c: Context) -> Context {
        var c = c
        switch c.state {
        case .stateTag:
            // `<foo {{.}}`: the value is an attribute name.
            c.state = .stateAttrName
        case .stateBeforeValue:
            // `<foo bar={{.}}`: the value is an unquoted attribute value.
            c.state = Transition.attrStartState(c.attr)
            c.delim = .delimSpaceOrTagEnd
            c.attr = .attrNone
        case .stateAfterName:
            // `<foo bar {{.}}`: the value is the next attribute's name.
            c.state = .stateAttrName
            c.attr = .attrNone
        default:
            break
        }
        return c
    }

    static func join(_ a: Context, _ b: Context, nodePos: Int, _ nodeName: String) -> Context {
        if a.state == .stateError { return a }
        if b.state == .stateError { return b }
        if a.state == .stateDead { return b }
        if b.state == .stateDead { return a }
        if a.eq(b) { return a }

        var c = a
        c.urlPart = b.urlPart
        if c.eq(b) {
            // Only the URL part differs: after the branch it is unknown.
            c.urlPart = .urlPartUnknown
            return c
        }

        c = a
        c.jsCtx = b.jsCtx
        if c.eq(b) {
            // Only the JavaScript context differs: after the branch it is unknown.
            c.jsCtx = .jsCtxUnknown
            return c
        }

        // A branch that stopped before an attribute value joins one that started it:
        // `<p title={{if .C}}{{.}}{{end}}` ends inside an unquoted value.
        let na = nudge(a)
        let nb = nudge(b)
        if !(na.eq(a) && nb.eq(b)) {
            let e = join(na, nb, nodePos: nodePos, nodeName)
            if e.state != .stateError { return e }
        }

        return Context.error(EscapeError(
            node: NodeRefPosition(pos: nodePos), line: 0,
            description: "{{\(nodeName)}} branches end in different contexts: \(a.goDescription), \(b.goDescription)"))
    }

    private mutating func escapeBranch(_ c: Context, _ n: BranchNode) -> (Context, BranchNode) {
        let nodeName = n.kind.name
        var branch = n
        var c0: Context
        if n.kind == .range {
            let body = escapeRangeBody(c, n)
            branch.list = body.list
            if body.context.state == .stateError { return (body.context, branch) }
            c0 = body.context
        } else {
            (c0, branch.list) = escapeList(c, n.list)
        }
        var c1 = c
        if let elseList = n.elseList {
            let (ce, escapedElse) = escapeList(c, elseList)
            c1 = ce
            branch.elseList = escapedElse
        }
        return (Escaper.join(c0, c1, nodePos: n.pos, nodeName), branch)
    }

    /// A range body escaped from `c`: its end context, joined with where its {{break}}s and
    /// {{continue}}s leave it, and its escaped nodes.
    ///
    /// The body is escaped twice (once more from its end context, as the loop runs again), so
    /// ranges nested n deep would escape the innermost body 2^n times: 22 levels took most of a
    /// minute. Go's escaper does the same work (escapeBranch, then escapeListConditionally on
    /// the body); it memoizes only template calls, by name and context (escapeTree). The result
    /// depends on nothing but the body and the context it starts in (the body's own
    /// {{break}}/{{continue}} contexts are collected in its own entry of `rangeContexts`), so
    /// it is kept by the range's position and that context, and a nested range is escaped once
    /// per context it is entered in.
    private mutating func escapeRangeBody(_ c: Context, _ n: BranchNode) -> (context: Context, list: [Node]) {
        let memoizable = c.err == nil
        if memoizable, let known = rangeBodies[n.pos]?.first(where: { $0.entry.eq(c) && $0.entry.breakNode ?? (-1, -1) == c.breakNode ?? (-1, -1) }) {
            return (known.context, known.list)
        }
        rangeContexts.append(([], []))
        var (c0, list) = escapeList(c, n.list)
        if c0.state != .stateError { c0 = joinRange(c0, rangeContexts.last!) }
        rangeContexts.removeLast()
        if c0.state == .stateError {
            if memoizable { rangeBodies[n.pos, default: []].append((c, c0, list)) }
            return (c0, list)
        }
        // A range body may run again from where it ended, so escaping it a second time,
        // from its end context, must end the same way.
        rangeContexts.append(([], []))
        let (c1, _) = escapeList(c0, n.list)
        if c1.jsBraceDepth.count == c0.jsBraceDepth.count {
            // Go hands the second pass the first pass's brace depths without copying them,
            // so the braces the body counts again show in the body's end context too.
            c0.jsBraceDepth = c1.jsBraceDepth
        }
        c0 = Escaper.join(c0, c1, nodePos: n.pos, "range")
        if c0.state == .stateError {
            rangeContexts.removeLast()
            // Go says that the second pass failed.
            c0.err!.line = n.line
            c0.err!.description = "on range loop re-entry: " + c0.err!.description
        } else {
            c0 = joinRange(c0, rangeContexts.last!)
            rangeContexts.removeLast()
        }
        if memoizable { rangeBodies[n.pos, default: []].append((c, c0, list)) }
        return (c0, list)
    }

    private func joinRange(_ c0: Context, _ rc: (breaks: [Context], continues: [Context])) -> Context {
        // A break or continue leaves the body in the context it was reached in; each must
        // agree with the body's end.
        var c0 = c0
        for (contexts, keyword) in [(rc.breaks, "break"), (rc.continues, "continue")] {
            for c in contexts {
                c0 = Escaper.join(c0, c, nodePos: c.breakNode?.pos ?? 0, "range")
                if c0.state == .stateError {
                    c0.err!.line = c.breakNode?.line ?? 0
                    c0.err!.description = "at range loop \(keyword): " + c0.err!.description
                    return c0
                }
            }
        }
        return c0
    }

    // MARK: Text

    private static let delimEnds: [Delim: [UInt8]] = [
        .delimDoubleQuote: Array("\"".utf8), .delimSingleQuote: Array("'".utf8),
        // What ends an unquoted attribute value in browsers.
        .delimSpaceOrTagEnd: Array(" \t\n\u{0C}\r>".utf8),
    ]

    private static let doctype: [UInt8] = Array("<!DOCTYPE".utf8)

    private mutating func escapeText(_ c: Context, _ n: TextNode) -> (Context, TextNode) {
        var c = c
        let s = n.text
        var written = 0
        var i = 0
        var b: [UInt8] = []
        while i != s.count {
            let (c1, nread) = Escaper.contextAfterText(c, s[i...])
            let i1 = i + nread
            if c.state == .stateText || c.state == .stateRCDATA {
                var end = i1
                if c1.state != c.state {
                    var j = end - 1
                    while j >= i {
                        if s[j] == UInt8(ascii: "<") {
                            end = j
                            break
                        }
                        j -= 1
                    }
                }
                var j = i
                while j < end {
                    if s[j] == UInt8(ascii: "<") && !Escaper.hasDoctypePrefix(s, j) {
                        b.append(contentsOf: s[written..<j])
                        b.append(contentsOf: Array("&lt;".utf8))
                        written = j + 1
                    }
                    j += 1
                }
            } else if c.state.isComment && c.delim == .delimNone {
                switch c.state {
                case .stateJSBlockCmt:
                    // A block comment with a line break inside counts as a line break (ES5
                    // §7.4), otherwise as a space.
                    if Escaper.containsLineTerminator(s[written..<i1]) {
                        b.append(UInt8(ascii: "\n"))
                    } else {
                        b.append(UInt8(ascii: " "))
                    }
                case .stateCSSBlockCmt:
                    b.append(UInt8(ascii: " "))
                default:
                    break
                }
                written = i1
            }
            if c.state != c1.state && c1.state.isComment && c1.delim == .delimNone {
                // Keep the text up to where the comment opens.
                var cs = i1 - 2
                if c1.state == .stateHTMLCmt || c1.state == .stateJSHTMLOpenCmt {
                    // "<!--" is four bytes long, "-->" three, the others two.
                    cs -= 2
                } else if c1.state == .stateJSHTMLCloseCmt {
                    cs -= 1
                }
                b.append(contentsOf: s[written..<cs])
                written = i1
            }
            if c.state.isInScriptLiteral, Escaper.containsSpecialScriptTag(s[i..<i1]) {
                b.append(contentsOf: s[written..<i])
                Escaper.appendEscapingSpecialScriptTags(s[i..<i1], to: &b)
                written = i1
            }
            if i == i1 && c.state == c1.state {
                preconditionFailure("infinite loop from \(c.goDescription) to \(c1.goDescription)")
            }
            c = c1
            i = i1
        }
        if written != 0 && c.state != .stateError {
            if !c.state.isComment || c.delim != .delimNone {
                b.append(contentsOf: n.text[written...])
            }
            return (c, TextNode(pos: n.pos, text: b))
        }
        return (c, n)
    }

    /// Whether `<!--`, `<script` or `</script` (in any case) occurs in `s`.
    private static func containsSpecialScriptTag(_ s: ArraySlice<UInt8>) -> Bool {
        var j = s.startIndex
        while let k = s[j...].firstIndex(of: UInt8(ascii: "<")) {
            if specialScriptTagLength(s, k) > 0 { return true }
            j = k + 1
        }
        return false
    }

    /// The length after '<' of the `!--`, `script` or `/script` starting at `k + 1`, or 0.
    private static func specialScriptTagLength(_ s: ArraySlice<UInt8>, _ k: Int) -> Int {
        for tag in specialScriptTags where k + 1 + tag.count <= s.endIndex {
            var match = true
            for (n, t) in tag.enumerated() {
                var x = s[k + 1 + n]
                if x >= 0x41 && x <= 0x5A { x += 32 }
                if x != t {
                    match = false
                    break
                }
            }
            if match { return tag.count }
        }
        return 0
    }

    private static let specialScriptTags: [[UInt8]] = [Array("script".utf8), Array("/script".utf8), Array("!--".utf8)]

    /// `s` with the '<' of each `<!--`, `<script` and `</script` written as `\x3C`, which the
    /// HTML parser does not read as a tag (WHATWG HTML 4.12.1.3).
    private static func appendEscapingSpecialScriptTags(_ s: ArraySlice<UInt8>, to b: inout [UInt8]) {
        var j = s.startIndex
        while j < s.endIndex {
            if s[j] == UInt8(ascii: "<") {
                let n = specialScriptTagLength(s, j)
                if n > 0 {
                    b.append(contentsOf: Array("\\x3C".utf8))
                    b.append(contentsOf: s[(j + 1)..<(j + 1 + n)])
                    j += 1 + n
                    continue
                }
            }
            b.append(s[j])
            j += 1
        }
    }

    private static func hasDoctypePrefix(_ s: [UInt8], _ j: Int) -> Bool {
        guard j + doctype.count <= s.count else { return false }
        for k in 0..<doctype.count {
            var x = s[j + k]
            if x >= UInt8(ascii: "a") && x <= UInt8(ascii: "z") { x -= 32 }
            if x != doctype[k] { return false }
        }
        return true
    }

    private static func containsLineTerminator(_ s: ArraySlice<UInt8>) -> Bool {
        var i = s.startIndex
        while i < s.endIndex {
            let b = s[i]
            if b == 0x0A || b == 0x0D { return true }
            if b == 0xE2 && i + 2 < s.endIndex && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9) { return true }
            i += 1
        }
        return false
    }

    /// contextAfterText: the context after a prefix of `s`, and how long that prefix is.
    static func contextAfterText(_ c: Context, _ s: ArraySlice<UInt8>) -> (Context, Int) {
        if c.delim == .delimNone {
            let (c1, i) = Transition.tSpecialTagEnd(c, s)
            if i == 0 {
                // At the element's end tag (`</script>`): its content is over.
                return (c1, 0)
            }
            // The content before such an end tag follows the element's rules.
            return Transition.run(c, Transition.sub(s, 0, i))
        }

        // Inside an attribute value, which ends at its delimiter.
        let ends = delimEnds[c.delim]!
        let i = Transition.indexAny(s, ends) ?? s.count
        if c.delim == .delimSpaceOrTagEnd {
            // HTML5 calls these characters errors in an unquoted value (and IE reads the
            // backtick as a quote): parsers disagree on where such a value ends.
            if let j = Transition.indexAny(Transition.sub(s, 0, i), Array("\"'<=`".utf8)) {
                let err = EscapeError(
                    node: nil, line: 0,
                    description: "\(Transition.quoted(Transition.sub(s, j, j + 1))) in unquoted attr: \(Transition.quoted(Transition.sub(s, 0, i)))")
                return (Context.error(err), s.count)
            }
        }
        if i == s.count {
            // The value goes on past this text: its context is followed in the decoded text
            // (`&quot;` is a quote to the JavaScript of an onclick).
            var c = c
            var u = HTMLEntities.unescape(Array(s))[...]
            while !u.isEmpty {
                let (c1, i1) = Transition.run(c, u)
                c = c1
                u = u.dropFirst(i1)
            }
            return (c, s.count)
        }

        var element = c.element
        // A script element whose type is not JavaScript holds plain text.
        if c.state == .stateAttr && c.element == .elementScript && c.attr == .attrScriptType
            && !Transition.isJSType(String(decoding: Transition.sub(s, 0, i), as: UTF8.self))
        {
            element = .elementNone
        }
        var consumed = i
        if c.delim != .delimSpaceOrTagEnd {
            // The closing quote belongs to the attribute.
            consumed += 1
        }
        // After the attribute only the tag state and the element carry on.
        return (Context(state: .stateTag, element: element), consumed)
    }
}

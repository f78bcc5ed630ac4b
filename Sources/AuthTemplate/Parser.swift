import GoFormats

/// Go's text/template/parse parser (parse.go), with its three-token lookahead, so that parse
/// errors carry Go's wording and Go's line: the line of the last token read from the lexer.
///
/// `{{define}}`, `{{template}}` and `{{block}}` are not supported (email templates are single
/// templates; GoTrue parses each one on its own); they are reported as parse errors.
struct Parser {
    private var lexer: Lexer
    private var token: [Item] = Array(repeating: Item(type: .eof, pos: 0, val: "", line: 0), count: 3)
    private var peekCount = 0
    var vars: [String] = ["$"]
    private var actionLine = 0
    private var rangeDepth = 0
    /// How deep the parse is in blocks and parenthesized pipelines, in the units of
    /// `maxNestingDepth`.
    var nestingDepth = 0
    private let name: String

    /// The deepest nesting a template may have: each `{{if}}`, `{{with}}` and `{{range}}` (and
    /// each `{{else if}}` / `{{else with}}` of a chain, which Go parses as a block inside the
    /// `{{else}}`) counts 1, each parenthesized pipeline 2.
    ///
    /// Go's parser limits only parentheses (`maxStackDepth`, 10000, "max expression depth
    /// exceeded") and leaves blocks to its growing goroutine stacks. Here parsing, escaping and
    /// executing recurse once per level on a thread of fixed size (the HTTP workers have
    /// 512 KiB), and this module is compiled without optimization, release included
    /// (Package.swift), so a level is costly: measured on Linux x86-64, up to 18 KiB of stack
    /// for a block (a `{{range}}` when escaping) and up to 30 KiB for a parenthesized pipeline
    /// (`(index (...).A "k").B` when executing), hence the weight of 2. At 14 units the deepest
    /// template allowed needs at most about 250 KiB, half a worker's stack, leaving the rest to
    /// the request that renders it. Email templates nest a few levels.
    static let maxNestingDepth = 14

    /// Adds `units` to the nesting depth, failing past `maxNestingDepth`.
    mutating func enterNesting(_ units: Int, parenthesized: Bool) throws(Failure) {
        nestingDepth += units
        guard nestingDepth > Parser.maxNestingDepth else { return }
        // Go's wording where Go has a limit (parentheses), then this one's rule.
        let what = parenthesized ? "max expression depth exceeded" : "nesting too deep"
        throw failure(
            "\(what) (limit \(Parser.maxNestingDepth): each {{if}}, {{with}}, {{range}}, {{else if}} and {{else with}} "
                + "counts 1, each parenthesized pipeline 2)")
    }

    /// The builtins of text/template (funcs.go); no other function is defined.
    static let builtinNames: Set<String> = [
        "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println",
        "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
    ]

    struct Failure: Error {
        let line: Int
        let message: String
    }

    static func parse(_ source: [UInt8], name: String) throws(TemplateError) -> [Node] {
        var parser = Parser(lexer: Lexer(source), name: name)
        do {
            return try parser.parseTemplate()
        } catch {
            throw TemplateError(name: name, line: error.line, message: error.message, origin: .parse)
        }
    }

    private init(lexer: Lexer, name: String) {
        self.lexer = lexer
        self.name = name
    }

    // MARK: Tokens

    mutating func next() -> Item {
        if peekCount > 0 {
            peekCount -= 1
        } else {
            token[0] = lexer.nextItem()
        }
        return token[peekCount]
    }

    mutating func backup() { peekCount += 1 }

    mutating func backup2(_ t1: Item) {
        token[1] = t1
        peekCount = 2
    }

    mutating func backup3(_ t2: Item, _ t1: Item) {
        token[1] = t1
        token[2] = t2
        peekCount = 3
    }

    mutating func peek() -> Item {
        if peekCount > 0 { return token[peekCount - 1] }
        peekCount = 1
        token[0] = lexer.nextItem()
        return token[0]
    }

    mutating func nextNonSpace() -> Item {
        var item: Item
        repeat { item = next() } while item.type == .space
        return item
    }

    mutating func peekNonSpace() -> Item {
        let item = nextNonSpace()
        backup()
        return item
    }

    // MARK: Errors

    func failure(_ message: String) -> Failure {
        Failure(line: token[0].line, message: message)
    }

    func unexpected(_ item: Item, _ context: String) -> Failure {
        if item.type == .error {
            var extra = ""
            if actionLine != 0 && actionLine != item.line {
                extra = " in action started at \(name):\(actionLine)"
                if item.val.hasSuffix(" action") {
                    extra = String(extra.dropFirst(" in action".count))  // "unclosed action started at"
                }
            }
            return failure("\(item)\(extra)")
        }
        return failure("unexpected \(item) in \(context)")
    }

    private mutating func expect(_ expected: ItemType, _ context: String) throws(Failure) -> Item {
        let item = nextNonSpace()
        if item.type != expected { throw unexpected(item, context) }
        return item
    }

    // MARK: Structure

    private enum Parsed {
        case node(Node)
        case end(pos: Int)
        case elseNode(pos: Int, line: Int)

        var goDescription: String {
            switch self {
            case .end: return "{{end}}"
            case .elseNode: return "{{else}}"
            case .node: return "node"
            }
        }
    }

    private mutating func parseTemplate() throws(Failure) -> [Node] {
        var root: [Node] = []
        while peek().type != .eof {
            if peek().type == .leftDelim {
                let delim = next()
                if nextNonSpace().type == .define {
                    throw failure("{{define}} is not supported")
                }
                backup2(delim)
            }
            switch try textOrAction() {
            case .end: throw failure("unexpected {{end}}")
            case .elseNode: throw failure("unexpected {{else}}")
            case .node(let n):
                root.append(n)
            }
        }
        return root
    }

    private mutating func itemList() throws(Failure) -> (list: [Node], next: Parsed) {
        var list: [Node] = []
        while peekNonSpace().type != .eof {
            let n = try textOrAction()
            switch n {
            case .end, .elseNode: return (list, n)
            case .node(let node): list.append(node)
            }
        }
        throw failure("unexpected EOF")
    }

    private mutating func textOrAction() throws(Failure) -> Parsed {
        let item = nextNonSpace()
        switch item.type {
        case .text:
            return .node(.text(TextNode(pos: item.pos, text: Array(item.val.utf8))))
        case .leftDelim:
            actionLine = item.line
            defer { actionLine = 0 }
            return try action()
        case .comment:
            return .node(.comment)
        default:
            throw unexpected(item, "input")
        }
    }

    private mutating func action() throws(Failure) -> Parsed {
        let item = nextNonSpace()
        switch item.type {
        case .block: throw failure("{{block}} is not supported")
        case .breakKeyword: return try breakControl(item, isBreak: true)
        case .continueKeyword: return try breakControl(item, isBreak: false)
        case .elseKeyword: return try elseControl()
        case .end: return .end(pos: try expect(.rightDelim, "end").pos)
        case .ifKeyword: return .node(.branch(try parseControl(kind: .ifBranch)))
        case .range: return .node(.branch(try parseControl(kind: .range)))
        case .template: throw failure("{{template}} is not supported")
        case .with: return .node(.branch(try parseControl(kind: .with)))
        default: break
        }
        backup()
        let start = peek()
        return .node(.action(ActionNode(pos: start.pos, line: start.line, pipe: try pipeline("command", end: .rightDelim))))
    }

    private mutating func breakControl(_ item: Item, isBreak: Bool) throws(Failure) -> Parsed {
        let keyword = isBreak ? "{{break}}" : "{{continue}}"
        let next = nextNonSpace()
        if next.type != .rightDelim { throw unexpected(next, keyword) }
        if rangeDepth == 0 { throw failure("\(keyword) outside {{range}}") }
        return .node(isBreak ? .breakLoop(pos: item.pos, line: item.line) : .continueLoop(pos: item.pos, line: item.line))
    }

    private mutating func elseControl() throws(Failure) -> Parsed {
        // `else if` and `else with`: the keyword is left for parseControl.
        let p = peekNonSpace()
        if p.type == .ifKeyword || p.type == .with { return .elseNode(pos: p.pos, line: p.line) }
        let item = try expect(.rightDelim, "else")
        return .elseNode(pos: item.pos, line: item.line)
    }

    private mutating func parseControl(kind: BranchKind) throws(Failure) -> BranchNode {
        let savedVars = vars.count
        defer { vars.removeLast(vars.count - savedVars) }
        try enterNesting(1, parenthesized: false)
        defer { nestingDepth -= 1 }
        let pipe = try pipeline(kind.name, end: .rightDelim)
        if kind == .range { rangeDepth += 1 }
        let (list, firstNext) = try itemList()
        var next = firstNext
        if kind == .range { rangeDepth -= 1 }
        var elseList: [Node]?
        switch next {
        case .end, .node:
            break
        case .elseNode:
            // "{{if a}}x{{else if b}}y{{end}}" is "{{if a}}x{{else}}{{if b}}y{{end}}{{end}}",
            // with one {{end}} closing both; "{{with a}}x{{else with b}}y{{end}}" likewise.
            if (kind == .ifBranch && peek().type == .ifKeyword) || (kind == .with && peek().type == .with) {
                _ = self.next()
                elseList = [.branch(try parseControl(kind: kind))]
                break
            }
            let (otherList, otherNext) = try itemList()
            elseList = otherList
            next = otherNext
            if case .end = next {} else { throw failure("expected end; found \(next.goDescription)") }
        }
        return BranchNode(kind: kind, pos: pipe.pos, line: pipe.line, pipe: pipe, list: list, elseList: elseList)
    }
}

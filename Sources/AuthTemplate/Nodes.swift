/// The parse tree of a template, in the shape of Go's text/template/parse (node.go): the same
/// node kinds, positions (byte offsets into the template text) and `String()` renderings,
/// because Go's error messages quote nodes (`executing "x" at <index .Data.tags 9>`) and locate
/// them (`x:2:3`) through exactly these.

enum Node: Sendable {
    case text(TextNode)
    case action(ActionNode)
    case branch(BranchNode)
    case comment
    case breakLoop(pos: Int, line: Int)
    case continueLoop(pos: Int, line: Int)
}

struct TextNode: Sendable {
    var pos: Int
    var text: [UInt8]
}

struct ActionNode: Sendable {
    var pos: Int
    var line: Int
    var pipe: PipeNode
}

enum BranchKind: Sendable {
    case ifBranch, range, with

    var name: String {
        switch self {
        case .ifBranch: return "if"
        case .range: return "range"
        case .with: return "with"
        }
    }
}

/// `if`, `range` and `with` (Go's BranchNode); its position is its pipeline's.
struct BranchNode: Sendable {
    var kind: BranchKind
    var pos: Int
    var line: Int
    var pipe: PipeNode
    var list: [Node]
    var elseList: [Node]?
}

struct PipeNode: Sendable {
    var pos: Int
    var line: Int
    var isAssign = false
    var decl: [VariableNode] = []
    var cmds: [CommandNode] = []
}

struct VariableNode: Sendable {
    var pos: Int
    /// The variable's name and the fields after it: `$x.A.B` is ["$x", "A", "B"].
    var ident: [String]
}

struct CommandNode: Sendable {
    var pos: Int
    var args: [Arg]
}

/// A parsed number constant with every interpretation Go's NumberNode records.
struct NumberNode: Sendable {
    var pos: Int
    var text: String
    var isInt = false
    var isUint = false
    var isFloat = false
    var isComplex = false
    var int64: Int64 = 0
    var uint64: UInt64 = 0
    var float64: Double = 0
    var complex: (re: Double, im: Double) = (0, 0)
}

/// An operand of a command.
indirect enum Arg: Sendable {
    case field(pos: Int, ident: [String])
    case variable(VariableNode)
    case dot(pos: Int)
    case nilValue(pos: Int)
    case bool(pos: Int, value: Bool)
    case number(NumberNode)
    case string(pos: Int, quoted: String, text: String)
    case identifier(pos: Int, name: String)
    case chain(pos: Int, node: Arg, fields: [String])
    case pipe(PipeNode)

    var pos: Int {
        switch self {
        case .field(let pos, _), .dot(let pos), .nilValue(let pos), .bool(let pos, _), .string(let pos, _, _),
            .identifier(let pos, _), .chain(let pos, _, _):
            return pos
        case .variable(let v): return v.pos
        case .number(let n): return n.pos
        case .pipe(let p): return p.pos
        }
    }
}

// MARK: - String() as Go writes nodes

extension Arg: CustomStringConvertible {
    var description: String {
        switch self {
        case .field(_, let ident): return ident.map { "." + $0 }.joined()
        case .variable(let v): return v.description
        case .dot: return "."
        case .nilValue: return "nil"
        case .bool(_, let value): return value ? "true" : "false"
        case .number(let n): return n.text
        case .string(_, let quoted, _): return quoted
        case .identifier(_, let name): return name
        case .chain(_, let node, let fields):
            var s: String
            if case .pipe(let p) = node { s = "(" + p.description + ")" } else { s = node.description }
            for f in fields { s += "." + f }
            return s
        case .pipe(let p): return p.description
        }
    }
}

extension VariableNode: CustomStringConvertible {
    var description: String { ident.joined(separator: ".") }
}

extension CommandNode: CustomStringConvertible {
    var description: String {
        var s = ""
        for (i, arg) in args.enumerated() {
            if i > 0 { s += " " }
            if case .pipe(let p) = arg { s += "(" + p.description + ")" } else { s += arg.description }
        }
        return s
    }
}

extension PipeNode: CustomStringConvertible {
    var description: String {
        var s = ""
        if !decl.isEmpty {
            s = decl.map(\.description).joined(separator: ", ") + " := "
        }
        s += cmds.map(\.description).joined(separator: " | ")
        return s
    }
}

extension ActionNode: CustomStringConvertible {
    var description: String { "{{" + pipe.description + "}}" }
}

/// What the executor or the escaper was looking at when it failed: Go's errors name the node
/// (`n.String()`) and its position.
enum NodeRef {
    case arg(Arg)
    case command(CommandNode)
    case pipe(PipeNode)
    case action(ActionNode)
    case branch(BranchNode)
    case text(TextNode)
    case other(pos: Int, text: String)

    var pos: Int {
        switch self {
        case .arg(let a): return a.pos
        case .command(let c): return c.pos
        case .pipe(let p): return p.pos
        case .action(let a): return a.pos
        case .branch(let b): return b.pos
        case .text(let t): return t.pos
        case .other(let pos, _): return pos
        }
    }

    var text: String {
        switch self {
        case .arg(let a): return a.description
        case .command(let c): return c.description
        case .pipe(let p): return p.description
        case .action(let a): return a.description
        case .branch(let b): return "{{\(b.kind.name) \(b.pipe.description)}}"
        case .text(let t): return String(decoding: t.text, as: UTF8.self)
        case .other(_, let text): return text
        }
    }
}

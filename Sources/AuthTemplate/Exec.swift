import AuthJSON
import GoFormats

/// Go's text/template executor (exec.go): the same evaluation order, the same checks in the
/// same places, and the node it was at when a check fails, so execution errors read as Go's.
struct ExecFailure: Error {
    let templateError: TemplateError
}

enum Control {
    case normal, breakLoop, continueLoop
}

/// The parameter types the builtins and escapers declare, as far as execution tells them
/// apart: `reflect.Value` (the comparison and indexing builtins receive values as they are),
/// `interface{}` (fmt-style functions receive dynamic values) and `string` (printf's format).
enum ParamType {
    case value, any, string

    var goName: String {
        switch self {
        case .value: return "reflect.Value"
        case .any: return "interface {}"
        case .string: return "string"
        }
    }
}

struct ExecState {
    let location: SourceLocation
    var out: [UInt8] = []
    var vars: [(name: String, value: Value)]
    private var node: NodeRef?
    /// Nodes walked and loop iterations run so far, against `maxSteps`.
    private var steps = 0
    /// Bytes of the strings functions took and returned so far, against `maxFunctionBytes`.
    var functionBytes = 0

    /// The render budget. Go's text/template has none: `{{range 20000000}}x{{end}}` renders
    /// 20 MB there, and a `printf` doubling a variable in a loop grows without end. Here a
    /// render runs on an HTTP worker, with the database writer waiting on the mail it sends, so
    /// it stops with an execution error once its output (or any string a function returns)
    /// passes `maxOutputBytes`, or once it has walked `maxSteps` nodes and loop iterations. An
    /// email body is a few KiB and a loop over a user's metadata a few hundred steps. A step may
    /// still be long (a `printf` of a large variable, an `eq` of two), so the strings functions
    /// take and return are counted too, in all: past `maxFunctionBytes` the render stops. Within
    /// the three limits a render takes well under a second even unoptimized.
    static let maxOutputBytes = 2 << 20
    static let maxSteps = 1_000_000
    static let maxFunctionBytes = 32 << 20

    init(location: SourceLocation, dot: Value) {
        self.location = location
        self.vars = [("$", dot)]
        out.reserveCapacity(1024)
    }

    // MARK: Errors

    mutating func at(_ node: NodeRef) { self.node = node }

    func failure(_ message: String) -> ExecFailure {
        let name = location.name
        guard let node else {
            return ExecFailure(templateError: TemplateError(name: name, line: 0, message: message, origin: .execute(column: nil)))
        }
        let (line, column) = location.lineAndColumn(node.pos)
        let text = "executing \(GoStrconv.quote(name)) at <\(node.text)>: \(message)"
        return ExecFailure(templateError: TemplateError(name: name, line: line, message: text, origin: .execute(column: column)))
    }

    // MARK: Variables

    mutating func setVar(_ name: String, _ value: Value) throws(ExecFailure) {
        for i in stride(from: vars.count - 1, through: 0, by: -1) where vars[i].name == name {
            vars[i].value = value
            return
        }
        throw failure("undefined variable: \(name)")
    }

    func varValue(_ name: String) throws(ExecFailure) -> Value {
        for i in stride(from: vars.count - 1, through: 0, by: -1) where vars[i].name == name {
            return vars[i].value
        }
        throw failure("undefined variable: \(name)")
    }

    // MARK: Walking

    mutating func walkList(_ dot: Value, _ list: [Node]) throws(ExecFailure) -> Control {
        for node in list {
            let control = try walk(dot, node)
            if case .normal = control { continue }
            return control
        }
        return .normal
    }

    /// Counts one step of the render budget.
    private mutating func step() throws(ExecFailure) {
        steps += 1
        if steps > ExecState.maxSteps {
            throw failure("template takes more than \(ExecState.maxSteps) steps (the render limit)")
        }
    }

    private mutating func checkOutputSize() throws(ExecFailure) {
        if out.count > ExecState.maxOutputBytes {
            throw failure("template output exceeds \(ExecState.maxOutputBytes) bytes (the render limit)")
        }
    }

    private mutating func walk(_ dot: Value, _ node: Node) throws(ExecFailure) -> Control {
        try step()
        switch node {
        case .text(let t):
            at(.text(t))
            out.append(contentsOf: t.text)
            try checkOutputSize()
        case .action(let a):
            at(.action(a))
            let value = try evalPipeline(dot, a.pipe)
            if a.pipe.decl.isEmpty {
                printValue(value)
                try checkOutputSize()
            }
        case .branch(let b):
            switch b.kind {
            case .range: return try walkRange(dot, b)
            case .ifBranch, .with: return try walkIfOrWith(dot, b)
            }
        case .comment:
            break
        case .breakLoop:
            return .breakLoop
        case .continueLoop:
            return .continueLoop
        }
        return .normal
    }

    private mutating func walkIfOrWith(_ dot: Value, _ b: BranchNode) throws(ExecFailure) -> Control {
        at(.branch(b))
        let mark = vars.count
        defer { vars.removeLast(vars.count - mark) }
        let value = try evalPipeline(dot, b.pipe)
        if value.indirectInterface.truth {
            return try walkList(b.kind == .with ? value : dot, b.list)
        } else if let elseList = b.elseList {
            return try walkList(dot, elseList)
        }
        return .normal
    }

    private mutating func walkRange(_ dot: Value, _ r: BranchNode) throws(ExecFailure) -> Control {
        at(.branch(r))
        let outer = vars.count
        defer { vars.removeLast(vars.count - outer) }
        let value = try evalPipeline(dot, r.pipe).indirect.value
        let mark = vars.count
        let declared = r.pipe.decl.count
        // One iteration: the declared variables take the element (and the index or key), then
        // the body runs; a {{continue}} ends the iteration, a {{break}} the loop.
        func iteration(_ state: inout ExecState, _ index: Value, _ element: Value) throws(ExecFailure) -> Bool {
            // An iteration is a step even when the body is empty.
            try state.step()
            if declared > 0 { state.vars[state.vars.count - 1].value = element }
            if declared > 1 { state.vars[state.vars.count - 2].value = index }
            defer { state.vars.removeLast(state.vars.count - mark) }
            let control = try state.walkList(element, r.list)
            if case .breakLoop = control { return false }
            return true
        }
        switch value {
        case .slice(let s):
            if s.count > 0 {
                for i in 0..<s.count {
                    if !(try iteration(&self, .int(i), .element(s[i]))) { break }
                }
                return .normal
            }
        case .map(let m):
            if !m.isEmpty {
                // Go ranges over a map in sorted key order (internal/fmtsort).
                let sorted = m.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                for (key, element) in sorted {
                    if !(try iteration(&self, .string(key), .element(element))) { break }
                }
                return .normal
            }
        case .int, .uint8:
            // An integer n ranges over 0..<n (Go 1.24), each element of the integer's type;
            // there is no index to give a second variable.
            if declared > 1 { throw failure("can't use \(GoFormat.sprint([value])) to iterate over more than one variable") }
            let n: Int
            if case .int(let i) = value { n = i } else if case .uint8(let u) = value { n = Int(u) } else { n = 0 }
            if n > 0 {
                for i in 0..<n {
                    let element: Value = if case .uint8 = value { .uint8(UInt8(i)) } else { .int(i) }
                    if !(try iteration(&self, .invalid, element)) { break }
                }
                return .normal
            }
        case .invalid:
            break  // Nil data ranges like an empty map.
        default:
            throw failure("range can't iterate over \(GoFormat.sprint([value]))")
        }
        if let elseList = r.elseList { return try walkList(dot, elseList) }
        return .normal
    }

    private mutating func printValue(_ value: Value) {
        if case .invalid = value {
            out.append(contentsOf: Array("<no value>".utf8))
            return
        }
        GoFormat.print([value], to: &out)
    }
}

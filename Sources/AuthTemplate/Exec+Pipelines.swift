import AuthJSON
import GoFormats

extension ExecState {
    // MARK: Pipelines and commands

    mutating func evalPipeline(_ dot: Value, _ pipe: PipeNode) throws(ExecFailure) -> Value {
        at(.pipe(pipe))
        var value: Value? = nil  // Go's missingVal: no previous command.
        for cmd in pipe.cmds {
            // The previous value is this command's final argument; an interface result is
            // replaced by its dynamic value.
            value = try evalCommand(dot, cmd, final: value).indirectInterface
        }
        let result = value ?? .invalid
        for variable in pipe.decl {
            if pipe.isAssign {
                try setVar(variable.ident[0], result)
            } else {
                vars.append((variable.ident[0], result))
            }
        }
        return result
    }

    private func notAFunction(_ args: [Arg]?, _ final: Value?) throws(ExecFailure) {
        if let args, args.count > 1 || final != nil {
            throw failure("can't give argument to non-function \(args[0])")
        }
    }

    private mutating func evalCommand(_ dot: Value, _ cmd: CommandNode, final: Value?) throws(ExecFailure) -> Value {
        let firstWord = cmd.args[0]
        switch firstWord {
        case .field(_, let ident):
            return try evalFieldNode(dot, firstWord, ident, args: cmd.args, final: final)
        case .chain(_, let node, let fields):
            return try evalChainNode(dot, firstWord, node, fields, args: cmd.args, final: final)
        case .identifier(_, let name):
            return try evalFunction(dot, firstWord, name, cmd: .command(cmd), args: cmd.args, final: final)
        case .pipe(let p):
            // A parenthesized pipeline takes no arguments of its own.
            try notAFunction(cmd.args, final)
            return try evalPipeline(dot, p)
        case .variable(let v):
            return try evalVariableNode(dot, v, args: cmd.args, final: final)
        default:
            break
        }
        at(.arg(firstWord))
        try notAFunction(cmd.args, final)
        switch firstWord {
        case .bool(_, let b): return .bool(b)
        case .dot: return dot
        case .nilValue: throw failure("nil is not a command")
        case .number(let n): return try idealConstant(n)
        case .string(_, _, let text): return .string(text)
        default: throw failure("can't evaluate command \(GoStrconv.quote(firstWord.description))")
        }
    }

    /// An untyped number constant as an `interface{}` argument: complex, float64 when written
    /// as a float, else int.
    private mutating func idealConstant(_ constant: NumberNode) throws(ExecFailure) -> Value {
        at(.arg(.number(constant)))
        let text = constant.text
        let isHexInt = text.utf8.count > 2 && text.hasPrefix("0") && (text.dropFirst().first == "x" || text.dropFirst().first == "X")
            && !text.contains(where: { $0 == "p" || $0 == "P" })
        let isRuneInt = text.hasPrefix("'")
        if constant.isComplex {
            return .complex(constant.complex.re, constant.complex.im)
        }
        if constant.isFloat && !isHexInt && !isRuneInt && text.contains(where: { ".eEpP".contains($0) }) {
            return .float(constant.float64)
        }
        if constant.isInt { return .int(Int(constant.int64)) }
        if constant.isUint { throw failure("\(text) overflows int") }
        return .invalid
    }

    private mutating func evalFieldNode(_ dot: Value, _ field: Arg, _ ident: [String], args: [Arg]?, final: Value?)
        throws(ExecFailure) -> Value
    {
        at(.arg(field))
        return try evalFieldChain(dot, receiver: dot, node: field, ident[...], args: args, final: final)
    }

    private mutating func evalChainNode(_ dot: Value, _ chain: Arg, _ node: Arg, _ fields: [String], args: [Arg]?, final: Value?)
        throws(ExecFailure) -> Value
    {
        at(.arg(chain))
        if case .nilValue = node { throw failure("indirection through explicit nil in \(chain)") }
        // The parenthesized value receives the fields.
        let receiver = try evalArg(dot, nil, node)
        return try evalFieldChain(dot, receiver: receiver, node: chain, fields[...], args: args, final: final)
    }

    private mutating func evalVariableNode(_ dot: Value, _ variable: VariableNode, args: [Arg]?, final: Value?)
        throws(ExecFailure) -> Value
    {
        at(.arg(.variable(variable)))
        let value = try varValue(variable.ident[0])
        if variable.ident.count == 1 {
            try notAFunction(args, final)
            return value
        }
        return try evalFieldChain(dot, receiver: value, node: .variable(variable), variable.ident.dropFirst(), args: args, final: final)
    }

    private mutating func evalFieldChain(
        _ dot: Value, receiver: Value, node: Arg, _ ident: ArraySlice<String>, args: [Arg]?, final: Value?
    ) throws(ExecFailure) -> Value {
        var receiver = receiver
        for name in ident.dropLast() {
            receiver = try evalField(name, args: nil, final: nil, receiver: receiver)
        }
        return try evalField(ident.last!, args: args, final: final, receiver: receiver)
    }

    private func evalField(_ fieldName: String, args: [Arg]?, final: Value?, receiver: Value) throws(ExecFailure) -> Value {
        if !receiver.isValid { return .invalid }
        let typeName = receiver.typeName
        let (value, isNil) = receiver.indirect
        if case .element = value, isNil {
            throw failure("nil pointer evaluating \(typeName).\(fieldName)")
        }
        let hasArgs = (args?.count ?? 0) > 1 || final != nil
        if case .map(let object) = value {
            if hasArgs { throw failure("\(fieldName) is not a method but has arguments") }
            if let member = object[fieldName] { return .element(member) }
            return .invalid
        }
        throw failure("can't evaluate field \(fieldName) in type \(typeName)")
    }

    private mutating func evalFunction(_ dot: Value, _ node: Arg, _ name: String, cmd: NodeRef, args: [Arg]?, final: Value?)
        throws(ExecFailure) -> Value
    {
        at(.arg(node))
        guard let function = Functions.Function.byName[name] else {
            throw failure("\(GoStrconv.quote(name)) is not a defined function")
        }
        return try evalCall(dot, name, function, node: cmd, args: args, final: final)
    }

    private mutating func evalCall(
        _ dot: Value, _ name: String, _ function: Functions.Function, node: NodeRef, args: [Arg]?, final: Value?
    ) throws(ExecFailure) -> Value {
        let signature = function.signature
        let args = args.map { Array($0.dropFirst()) } ?? []  // The function's own name is not an argument.
        let params = signature.params
        let numIn = args.count + (final != nil ? 1 : 0)
        var numFixed = args.count
        if signature.variadic {
            numFixed = params.count - 1
            if numIn < numFixed {
                throw failure("wrong number of args for \(name): want at least \(params.count - 1) got \(args.count)")
            }
        } else if numIn != params.count {
            throw failure("wrong number of args for \(name): want \(params.count) got \(numIn)")
        }

        // and and or evaluate their arguments in order, stopping at the first that decides.
        if function == .and || function == .or {
            var v: Value = .invalid
            for arg in args {
                v = try evalArg(dot, .value, arg)
                if v.indirectInterface.truth == (function == .or) { return v }
            }
            if let final { v = try validateType(final, .value) }
            return v
        }

        var argv: [Value] = []
        argv.reserveCapacity(numIn)
        var i = 0
        while i < numFixed && i < args.count {
            argv.append(try evalArg(dot, params[i], args[i]))
            i += 1
        }
        if signature.variadic {
            let element = params[params.count - 1]
            while i < args.count {
                argv.append(try evalArg(dot, element, args[i]))
                i += 1
            }
        }
        if let final {
            var t = params[params.count - 1]
            if signature.variadic && numIn - 1 < numFixed { t = params[numIn - 1] }
            argv.append(try validateType(final, t))
        }
        // Parameters of type interface{} receive dynamic values.
        var callArgs = argv
        for (k, _) in callArgs.enumerated() {
            let type = k < params.count - (signature.variadic ? 1 : 0) ? params[k] : params[params.count - 1]
            if case .any = type { callArgs[k] = callArgs[k].asAny }
        }
        // The render budget's third limit: what the functions handle in all (a fuzzed template
        // doubled a variable with printf inside a loop of a million steps: seconds per render).
        for arg in callArgs { if case .string(let text) = arg.indirectInterface { functionBytes += text.utf8.count } }
        try checkFunctionBytes(node)
        // call names its callee as written: the first argument's text, or the piped value
        // as reflect.Value's String prints it.
        let result =
            function == .call
            ? Functions.call(calleeName: args.first.map { "\($0)" } ?? ExecState.reflectString(final ?? .invalid), callArgs[0])
            : Functions.call(function, callArgs)
        switch result {
        case .success(let result):
            // Strings grow only through functions (printf, print, the escapers), so bounding
            // what a function returns bounds every value a variable can hold.
            if case .string(let text) = result, text.utf8.count > ExecState.maxOutputBytes {
                at(node)
                throw failure("error calling \(name): result exceeds \(ExecState.maxOutputBytes) bytes (the render limit)")
            }
            if case .string(let text) = result {
                functionBytes += text.utf8.count
                try checkFunctionBytes(node)
            }
            return result
        case .failure(let error):
            at(node)
            throw failure("error calling \(name): \(error.message)")
        }
    }

    private mutating func checkFunctionBytes(_ node: NodeRef) throws(ExecFailure) {
        if functionBytes > ExecState.maxFunctionBytes {
            at(node)
            throw failure("template functions handle more than \(ExecState.maxFunctionBytes) bytes in all (the render limit)")
        }
    }

    /// reflect.Value's String: a string itself, anything else only its type.
    static func reflectString(_ value: Value) -> String {
        switch value.indirectInterface {
        case .string(let s): return s
        case .invalid: return "<invalid Value>"
        case let v: return "<\(v.typeName) Value>"
        }
    }

    private static func canBeNil(_ type: ParamType?) -> Bool {
        switch type {
        case .value?, .any?: return true
        case .string?, nil: return false
        }
    }

    private func validateType(_ value: Value, _ type: ParamType?) throws(ExecFailure) -> Value {
        guard value.isValid else {
            guard let type else { return .invalid }
            if ExecState.canBeNil(type) { return .invalid }
            throw failure("invalid value; expected \(type.goName)")
        }
        guard let type else { return value }
        switch type {
        case .value, .any:
            return value
        case .string:
            if case .string = value { return value }
            var v = value
            if case .element(let json) = value, !json.isNull {
                v = Value(concrete: json)
                if case .string = v { return v }
            }
            throw failure("wrong type for value; expected string; got \(v.typeName)")
        }
    }

    private mutating func evalArg(_ dot: Value, _ type: ParamType?, _ n: Arg) throws(ExecFailure) -> Value {
        at(.arg(n))
        switch n {
        case .dot:
            return try validateType(dot, type)
        case .nilValue:
            if ExecState.canBeNil(type) { return .invalid }
            throw failure("cannot assign nil to \(type?.goName ?? "<nil>")")
        case .field(_, let ident):
            return try validateType(try evalFieldNode(dot, n, ident, args: [n], final: nil), type)
        case .variable(let v):
            return try validateType(try evalVariableNode(dot, v, args: nil, final: nil), type)
        case .pipe(let p):
            return try validateType(try evalPipeline(dot, p), type)
        case .identifier(_, let name):
            return try validateType(try evalFunction(dot, n, name, cmd: .arg(n), args: nil, final: nil), type)
        case .chain(_, let node, let fields):
            return try validateType(try evalChainNode(dot, n, node, fields, args: nil, final: nil), type)
        default:
            break
        }
        switch type {
        case .string?:
            at(.arg(n))
            if case .string(_, _, let text) = n { return .string(text) }
            throw failure("expected string; found \(n)")
        case .any?, .value?:
            return try evalEmptyInterface(dot, n)
        case nil:
            throw failure("can't handle \(n) for arg of type <nil>")
        }
    }

    private mutating func evalEmptyInterface(_ dot: Value, _ n: Arg) throws(ExecFailure) -> Value {
        at(.arg(n))
        switch n {
        case .bool(_, let b): return .bool(b)
        case .dot: return dot
        case .field(_, let ident): return try evalFieldNode(dot, n, ident, args: nil, final: nil)
        case .identifier(_, let name): return try evalFunction(dot, n, name, cmd: .arg(n), args: nil, final: nil)
        case .nilValue: throw failure("evalEmptyInterface: nil (can't happen)")
        case .number(let number): return try idealConstant(number)
        case .string(_, _, let text): return .string(text)
        case .variable(let v): return try evalVariableNode(dot, v, args: nil, final: nil)
        case .pipe(let p): return try evalPipeline(dot, p)
        case .chain: throw failure("can't handle assignment of \(n) to empty interface argument")
        }
    }
}

import AuthCrypto
import Foundation
import PythonTestSupport
import Testing
import AuthJSON
@testable import AuthJWT

/// Tokens minted here must verify under PyJWT and vice versa, with identical claims; and
/// number formatting must match Go's rules applied to Python's own shortest repr digits.
@Suite struct PythonCrossCheckTests {
    static let script = #"""
        import sys, json, jwt, warnings
        warnings.simplefilter("ignore")
        for line in sys.stdin:
            req = json.loads(line)
            key = bytes.fromhex(req["secret"])
            if req["op"] == "verify":
                claims = jwt.decode(req["token"], key, algorithms=["HS256"],
                                    options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                             "verify_aud": False, "verify_iss": False, "verify_sub": False,
                                             "verify_jti": False})
                header = jwt.get_unverified_header(req["token"])
                print(json.dumps({"claims": claims, "header": header}))
            else:
                headers = {"kid": req["kid"]} if req.get("kid") else None
                print(jwt.encode(req["claims"], key, algorithm="HS256", headers=headers))
        """#

    static let claimSets: [JSONObject] = [
        ["sub": "9f1c6b7e-0000-4000-8000-000000000001", "aud": "authenticated", "exp": 1_700_003_600,
         "iat": 1_700_000_000, "role": "authenticated", "email": "user@example.com", "phone": "",
         "app_metadata": ["provider": "email", "providers": ["email"]], "user_metadata": [:],
         "aal": "aal1", "amr": [["method": "password", "timestamp": 1_700_000_000]],
         "session_id": "6a3e", "is_anonymous": false],
        ["name": "Zoë <script>&\"quotes\"\n\u{2028}😀", "n": 1.5, "tiny": 1e-7, "big": 1e21, "neg": -0.25,
         "nested": ["a": [1, 2, ["b": nil]], "t": true]],
        [:],
    ]

    @Test(.enabled(if: Python.shouldRunPyJWT, "needs Python 3 with PyJWT (AUTH_EMULATOR_PYTHON)"))
    func interoperatesWithPyJWT() throws {
        try #require(Python.hasPyJWT, "Python with PyJWT is required under CI")
        let secretBytes = Array("cross-check-secret-with-at-least-32-bytes!".utf8)
        let keys = JWTKeySet(keys: [JWTKey(kid: "kid-1", secret: secretBytes)], fallback: JWTKey(secret: secretBytes))
        var requests: [String] = []
        var ours: [String] = []
        for (i, claims) in Self.claimSets.enumerated() {
            let key = JWTKey(kid: i == 1 ? "kid-1" : nil, secret: secretBytes)
            let token = JWT.sign(claims: claims, key: key)
            ours.append(token)
            requests.append(#"{"op":"verify","token":"\#(token)","secret":"\#(Hex.encode(secretBytes))"}"#)
        }
        for (i, claims) in Self.claimSets.enumerated() {
            let kid: JSON = i == 1 ? "kid-1" : nil
            let request: JSON = ["op": "mint", "claims": .object(claims), "secret": .string(Hex.encode(secretBytes)), "kid": kid]
            requests.append(request.serialized())
        }
        let lines = try Python.run(script: Self.script, input: requests.joined(separator: "\n") + "\n")
            .split(separator: "\n").map(String.init)
        try #require(lines.count == 2 * Self.claimSets.count)

        // PyJWT accepted our tokens and read the same claims and header.
        for (i, claims) in Self.claimSets.enumerated() {
            let decoded = try JSON(parsing: lines[i])
            #expect(decoded["claims"] == .object(claims), "claim set \(i)")
            let expectedHeader: JSON = i == 1 ? ["alg": "HS256", "kid": "kid-1", "typ": "JWT"] : ["alg": "HS256", "typ": "JWT"]
            #expect(decoded["header"] == expectedHeader)
        }
        // We accept PyJWT's tokens and read the same claims.
        for (i, claims) in Self.claimSets.enumerated() {
            let theirs = lines[Self.claimSets.count + i]
            let jwt = try JWT.verify(theirs, keys: keys, now: 1_700_000_000)
            #expect(jwt.claims == claims, "claim set \(i)")
            #expect(jwt.header["alg"] == "HS256")
            #expect(jwt.header["kid"] == (i == 1 ? "kid-1" : nil))
            // And a PyJWT token with one flipped payload bit is refused.
            var parts = theirs.split(separator: ".").map(String.init)
            var payload = try Base64URL.decode(parts[1])
            if !payload.isEmpty {
                payload[payload.count - 2] ^= 0x01
                parts[1] = Base64URL.encode(payload)
                #expect(throws: JWTError.self) { try JWT.verify(parts.joined(separator: "."), keys: keys, now: 0) }
            }
        }
    }

    static let floatScript = #"""
        import sys
        def go(f):
            if f == 0:
                return "-0" if str(f).startswith("-") else "0"
            r = repr(abs(f))
            mant, _, exp = r.partition("e")
            exp = int(exp or 0)
            ip, _, fp = mant.partition(".")
            digits = (ip + fp).lstrip("0")
            point = len(ip) + exp - (len(ip + fp) - len((ip + fp).lstrip("0")))
            digits = digits.rstrip("0")
            sign = "-" if f < 0 else ""
            a = abs(f)
            if a < 1e-6 or a >= 1e21:
                e = point - 1
                m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
                es = ("-" if e < 0 else "+") + (("%02d" % abs(e)) if e > 0 else str(abs(e)))
                return sign + m + "e" + es
            if point <= 0:
                return sign + "0." + "0" * (-point) + digits
            if point >= len(digits):
                return sign + digits + "0" * (point - len(digits))
            return sign + digits[:point] + "." + digits[point:]
        for line in sys.stdin:
            print(go(float.fromhex(line.strip())))
        """#

    @Test(.enabled(if: Python.shouldRun, "needs Python 3 (AUTH_EMULATOR_PYTHON or python3 on PATH)"))
    func numberFormattingMatchesGoRulesOnPythonDigits() throws {
        // Random bit patterns cover all magnitudes; the rest sit on the format boundaries.
        var values: [Double] = [0, -0.0, 1e-6, 9.999999999999999e-7, 1e21, 9.999999999999999e20, .leastNonzeroMagnitude,
                                .greatestFiniteMagnitude, 0.1, 1 / 3, 2.5e-7, 123456789.125]
        let random = SeededRandom(seed: 2024)
        while values.count < 2000 {
            let value = Double(bitPattern: random.next64())
            if value.isFinite { values.append(value) }
        }
        for i in 0..<300 { values.append(Double(i) * 1e-7); values.append(Double(i) * 1e19) }
        let input = values.map { hexFloat($0) }.joined(separator: "\n") + "\n"
        let expected = try Python.run(script: Self.floatScript, input: input).split(separator: "\n").map(String.init)
        try #require(expected.count == values.count)
        var mismatches = 0
        for (value, want) in zip(values, expected) where JSON.number(value).serialized() != want {
            mismatches += 1
            if mismatches <= 5 { Issue.record("\(value): got \(JSON.number(value).serialized()), want \(want)") }
        }
        #expect(mismatches == 0)
    }

    /// C99 hex float text that Python's float.fromhex reads back exactly.
    func hexFloat(_ value: Double) -> String {
        if value == 0 { return value.sign == .minus ? "-0x0p+0" : "0x0p+0" }
        let sign = value.sign == .minus ? "-" : ""
        let bits = value.bitPattern
        let exponentBits = Int((bits >> 52) & 0x7ff)
        let fraction = bits & ((1 << 52) - 1)
        if exponentBits == 0 {
            return "\(sign)0x0.\(String(String(fraction, radix: 16).reversed()).padding(13))p-1022"
        }
        return "\(sign)0x1.\(String(String(fraction, radix: 16).reversed()).padding(13))p\(exponentBits - 1023)"
    }
}

extension String {
    /// Reverses back after left-padding the reversed string: zero-pads a hex fraction to `width`.
    fileprivate func padding(_ width: Int) -> String {
        String((self + String(repeating: "0", count: Swift.max(0, width - count))).reversed())
    }
}

import AuthCrypto
import AuthJSON

// MARK: - COSE keys (RFC 9052 §7, RFC 9053 §7)

package struct COSEKey: Sendable {
    package enum Key: Sendable {
        case p256(P256PublicKey)
        case rsa(RSAPublicKey)
        case ed25519(Ed25519PublicKey)
    }
    package let algorithm: Int64
    package let key: Key

    /// `webauthncose.ParsePublicKey`, limited to what AuthCrypto verifies: EC2 (kty 2) on P-256
    /// (crv 1) with ES256, RSA (kty 3) with RS256, OKP (kty 1) on Ed25519 (crv 6) with EdDSA.
    package init(cbor bytes: [UInt8]) throws(WebAuthnFailure) {
        let value: CBOR
        do { value = try CBOR.decode(bytes) } catch { throw .verify("COSE key: \(error)") }
        guard value.mapValue != nil else { throw .verify("COSE key is not a map") }
        guard let kty = value[int: 1]?.intValue else { throw .verify("COSE key without kty") }
        guard let alg = value[int: 3]?.intValue else { throw .verify("COSE key without alg") }
        algorithm = alg
        switch (kty, alg) {
        case (2, WebAuthn.es256):
            guard value[int: -1]?.intValue == 1 else { throw .verify("EC2 key is not on P-256") }
            guard let x = value[int: -2]?.bytesValue, let y = value[int: -3]?.bytesValue, x.count == 32, y.count == 32 else {
                throw .verify("EC2 key coordinates are not 32-byte strings")
            }
            do { key = .p256(try P256PublicKey(x: x, y: y)) } catch { throw .verify("EC2 key: \(error)") }
        case (3, WebAuthn.rs256):
            guard let n = value[int: -1]?.bytesValue, let e = value[int: -2]?.bytesValue else {
                throw .verify("RSA key without n or e")
            }
            do { key = .rsa(try RSAPublicKey(modulus: n, exponent: e)) } catch { throw .verify("RSA key: \(error)") }
        case (1, WebAuthn.edDSA):
            guard value[int: -1]?.intValue == 6 else { throw .verify("OKP key is not Ed25519") }
            guard let x = value[int: -2]?.bytesValue else { throw .verify("OKP key without x") }
            do { key = .ed25519(try Ed25519PublicKey(rawRepresentation: x)) } catch { throw .verify("OKP key: \(error)") }
        default:
            throw .verify("unsupported COSE key type \(kty) with algorithm \(alg)")
        }
    }

    /// WebAuthn §6.5.6: ES256 signatures are ASN.1 DER `Ecdsa-Sig-Value`, RS256 PKCS #1 v1.5,
    /// EdDSA the raw 64 bytes.
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch key {
        case .p256(let k):
            guard let raw = DERSignature.rawP256(signature) else { return false }
            return k.isValidSignature(raw, for: message)
        case .rsa(let k):
            return RSA.verifyPKCS1v15SHA256(message, signature: signature, key: k)
        case .ed25519(let k):
            return k.isValidSignature(signature, for: message)
        }
    }

    /// A P-256 public key as a COSE_Key (the software authenticator's credentials).
    package static func encodeP256(_ key: P256PublicKey) -> [UInt8] {
        CBOR.map([
            .init(.int(1), .int(2)), .init(.int(3), .int(WebAuthn.es256)),
            .init(.int(-1), .int(1)), .init(.int(-2), .bytes(key.x)), .init(.int(-3), .bytes(key.y)),
        ]).encoded
    }
}

/// ECDSA signatures in DER (SEC 1 §C.5, X.690 §8.3 / §10): SEQUENCE { INTEGER r, INTEGER s }.
package enum DERSignature {
    /// Strict DER: short or minimal long-form lengths, minimal positive integers, nothing after.
    package static func rawP256(_ der: [UInt8]) -> [UInt8]? {
        var i = 0
        func length() -> Int? {
            guard i < der.count else { return nil }
            let first = der[i]; i += 1
            if first < 0x80 { return Int(first) }
            guard first == 0x81, i < der.count, der[i] >= 0x80 else { return nil }
            defer { i += 1 }
            return Int(der[i])
        }
        func integer() -> [UInt8]? {
            guard i < der.count, der[i] == 0x02 else { return nil }
            i += 1
            guard let n = length(), n > 0, n <= 33, der.count - i >= n else { return nil }
            let bytes = Array(der[i..<i + n]); i += n
            if bytes[0] & 0x80 != 0 { return nil }  // negative
            if n > 1 && bytes[0] == 0 && bytes[1] & 0x80 == 0 { return nil }  // not minimal
            let trimmed = bytes.drop(while: { $0 == 0 })
            guard trimmed.count <= 32 else { return nil }
            return [UInt8](repeating: 0, count: 32 - trimmed.count) + trimmed
        }
        guard der.first == 0x30 else { return nil }
        i = 1
        guard let total = length(), total == der.count - i, let r = integer(), let s = integer(), i == der.count else { return nil }
        return r + s
    }

    package static func encode(raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var v = Array(bytes.drop(while: { $0 == 0 }))
            if v.isEmpty { v = [0] }
            if v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02, UInt8(v.count)] + v
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}

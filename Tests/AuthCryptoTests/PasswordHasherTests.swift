import Foundation
import Testing
@testable import AuthCrypto

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(iterations: PasswordHasher.insecureTestIterations, random: SeededRandom(seed: 7))

    @Test func hashHasPHCShapeAndVerifies() throws {
        let phc = hasher.hash(password: "correct horse")
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        #expect(fields.count == 5)
        #expect(fields[1] == "pbkdf2-sha256")
        #expect(fields[2] == "i=1000,l=32")
        #expect(try Base64.decode(fields[3], padding: false).count == 16)
        #expect(try Base64.decode(fields[4], padding: false).count == 32)
        #expect(!fields[3].contains("=") && !fields[4].contains("="))
        #expect(PasswordHasher.verify(password: "correct horse", against: phc))
        #expect(!PasswordHasher.verify(password: "correct horsf", against: phc))
        #expect(!PasswordHasher.verify(password: "", against: phc))
    }

    @Test func knownAnswer() {
        // Built from the RFC 6070-style PBKDF2-HMAC-SHA256 vector (c=4096, dkLen=40), so the
        // parser and verifier are checked against an independent answer, including l != 32.
        let salt = Base64.encode(utf8("saltSALTsaltSALTsaltSALTsaltSALTsalt"), padding: false)
        let hash = Base64.encode(unhex("348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"),
                                 padding: false)
        let phc = "$pbkdf2-sha256$i=4096,l=40$\(salt)$\(hash)"
        #expect(PasswordHasher.verify(password: "passwordPASSWORDpassword", against: phc))
        #expect(!PasswordHasher.verify(password: "passwordPASSWORDpassworD", against: phc))
        #expect(!PasswordHasher.verify(password: "passwordPASSWORDpassword",
                                       against: "$pbkdf2-sha256$i=4095,l=40$\(salt)$\(hash)"))
        #expect(PasswordHasher(iterations: 4096).needsRehash(phc))  // not the standard 32-byte length
    }

    @Test func saltsDiffer() {
        let a = hasher.hash(password: "pw"), b = hasher.hash(password: "pw")
        #expect(a != b)
        #expect(PasswordHasher.verify(password: "pw", against: a) && PasswordHasher.verify(password: "pw", against: b))
    }

    /// The batch path draws the same salts in the same order as one call per password, so with
    /// the same seeded source it must produce exactly the same strings, and each verifies only
    /// its own password.
    @Test func batchHashesEqualOneCallPerPassword() {
        let passwords = ["a", "correct horse", "pässwörd 🔑", "", "a", String(repeating: "x", count: 100), "last"]
        let batch = PasswordHasher(iterations: 50, random: SeededRandom(seed: 11)).hash(passwords: passwords)
        let single = PasswordHasher(iterations: 50, random: SeededRandom(seed: 11))
        #expect(batch == passwords.map { single.hash(password: $0) })
        #expect(Set(batch).count == passwords.count)
        for (i, phc) in batch.enumerated() {
            #expect(PasswordHasher.verify(password: passwords[i], against: phc))
            #expect(!PasswordHasher.verify(password: passwords[i] + "!", against: phc))
        }
        #expect(hasher.hash(passwords: []).isEmpty)
    }

    @Test func unicodePasswordsUseTheirUTF8Bytes() {
        let phc = hasher.hash(password: "pässwörd 🔑")
        #expect(PasswordHasher.verify(password: "pässwörd 🔑", against: phc))
        #expect(!PasswordHasher.verify(password: "passwörd 🔑", against: phc))
    }

    @Test func tamperedHashesFail() throws {
        let phc = hasher.hash(password: "secret")
        var fields = phc.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        // Flip one bit of the stored hash.
        var hash = try Base64.decode(fields[4], padding: false)
        hash[0] ^= 0x80
        fields[4] = Base64.encode(hash, padding: false)
        #expect(!PasswordHasher.verify(password: "secret", against: fields.joined(separator: "$")))
        // Change the cost.
        let cheaper = phc.replacingOccurrences(of: "i=1000,", with: "i=999,")
        #expect(!PasswordHasher.verify(password: "secret", against: cheaper))
        // Change the salt.
        fields = phc.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        var salt = try Base64.decode(fields[3], padding: false)
        salt[15] ^= 1
        fields[3] = Base64.encode(salt, padding: false)
        #expect(!PasswordHasher.verify(password: "secret", against: fields.joined(separator: "$")))
    }

    @Test func malformedStringsAreRejected() {
        let good = hasher.hash(password: "x")
        let parts = good.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        let salt = parts[3], hash = parts[4]
        let malformed = [
            "",
            "$",
            "plain",
            "$pbkdf2-sha256$i=1000,l=32$\(salt)",
            "$pbkdf2-sha256$i=1000,l=32$\(salt)$\(hash)$",
            "pbkdf2-sha256$i=1000,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha512$i=1000,l=32$\(salt)$\(hash)",
            "$bcrypt$i=1000,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=0,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=-5,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=01000,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=10000001,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=99999999999999999999,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000$\(salt)$\(hash)",
            "$pbkdf2-sha256$l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000,l=31$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000,l=32,x=1$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000,i=1000,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000,l=32,$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1e3,l=32$\(salt)$\(hash)",
            "$pbkdf2-sha256$i=1000,l=32$\(salt)==$\(hash)",
            "$pbkdf2-sha256$i=1000,l=32$\(salt)$\(hash)=",
            "$pbkdf2-sha256$i=1000,l=32$$\(hash)",
            "$pbkdf2-sha256$i=1000,l=32$\(salt)$",
            "$pbkdf2-sha256$i=1000,l=32$\(salt.replacingOccurrences(of: "A", with: "-"))$\(hash)",
        ]
        for phc in malformed where phc != good {
            #expect(!PasswordHasher.verify(password: "x", against: phc), "\(phc)")
            #expect(hasher.needsRehash(phc), "\(phc)")
        }
        // Parameters in the other order are still the same PHC parameters.
        #expect(PasswordHasher.verify(password: "x", against: "$pbkdf2-sha256$l=32,i=1000$\(salt)$\(hash)"))
    }

    @Test func needsRehashTracksCost() {
        let phc = hasher.hash(password: "x")
        #expect(!hasher.needsRehash(phc))
        #expect(PasswordHasher(iterations: 2_000).needsRehash(phc))
        #expect(PasswordHasher().iterations == 100_000)
    }
}

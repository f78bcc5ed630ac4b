import GoFormats

/// strconv.FormatFloat(v, fmt, prec, 64) for 'e', 'E', 'f', 'g' and 'G' (ftoa.go): the
/// shortest digits that read back to the same float64 when prec is -1 (Swift's `description`
/// chooses the same digits), otherwise the exact decimal value rounded half to even at the
/// requested digit, then Go's layouts. (fmt's `%v` is shortest 'g', which switches to the
/// exponent form from an exponent of 6 on: 123456 but 1.234567e+06, 1e+06.)
enum GoFloatFormat {
    /// Decimal digits d1 d2 ... dn (no leading zeros; trailing zeros trimmed for shortest) with
    /// the point after `dp` of them: value = 0.d1d2...dn × 10^dp.
    struct Decimal {
        var digits: [UInt8]
        var dp: Int
    }

    static func format(_ value: Double, _ fmt: UInt8, _ prec: Int) -> String? {
        switch fmt {
        case UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "f"), UInt8(ascii: "g"), UInt8(ascii: "G"): break
        default: return nil
        }
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "+Inf" }
        let negative = value.sign == .minus
        let magnitude = value.magnitude
        let shortest = prec < 0
        var precision = prec
        var d: Decimal
        if shortest {
            let (digits, point) = GoStrconv.shortestDigits(magnitude)
            d = Decimal(digits: digits, dp: point)
            switch fmt {
            case UInt8(ascii: "e"), UInt8(ascii: "E"): precision = max(d.digits.count - 1, 0)
            case UInt8(ascii: "f"): precision = max(d.digits.count - d.dp, 0)
            default: precision = d.digits.count
            }
        } else {
            d = exactDigits(magnitude)
            switch fmt {
            case UInt8(ascii: "e"), UInt8(ascii: "E"): round(&d, precision + 1)
            case UInt8(ascii: "f"): round(&d, d.dp + precision)
            default:
                if precision == 0 { precision = 1 }
                round(&d, precision)
            }
        }
        var out: [UInt8] = negative ? [UInt8(ascii: "-")] : []
        switch fmt {
        case UInt8(ascii: "e"), UInt8(ascii: "E"):
            fmtE(&out, d, precision, fmt)
        case UInt8(ascii: "f"):
            fmtF(&out, d, precision)
        default:
            // The exponent form when the exponent is below -4 or reaches the precision (6 for
            // the shortest digits).
            var eprec = precision
            if eprec > d.digits.count && d.digits.count >= d.dp { eprec = d.digits.count }
            if shortest { eprec = 6 }
            let exp = d.dp - 1
            if exp < -4 || exp >= eprec {
                if precision > d.digits.count { precision = d.digits.count }
                fmtE(&out, d, precision - 1, fmt + UInt8(ascii: "e") - UInt8(ascii: "g"))
            } else {
                if precision > d.dp { precision = d.digits.count }
                fmtF(&out, d, max(precision - d.dp, 0))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func fmtE(_ out: inout [UInt8], _ d: Decimal, _ prec: Int, _ fmt: UInt8) {
        out.append(d.digits.isEmpty ? UInt8(ascii: "0") : d.digits[0])
        if prec > 0 {
            out.append(UInt8(ascii: "."))
            var i = 1
            let m = min(d.digits.count, prec + 1)
            if i < m {
                out.append(contentsOf: d.digits[i..<m])
                i = m
            }
            while i <= prec {
                out.append(UInt8(ascii: "0"))
                i += 1
            }
        }
        out.append(fmt)
        var exp = d.dp - 1
        if d.digits.isEmpty { exp = 0 }  // Zero's exponent is 0.
        if exp < 0 {
            out.append(UInt8(ascii: "-"))
            exp = -exp
        } else {
            out.append(UInt8(ascii: "+"))
        }
        if exp < 10 {
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0") + UInt8(exp))
        } else {
            out.append(contentsOf: Array(String(exp).utf8))
        }
    }

    private static func fmtF(_ out: inout [UInt8], _ d: Decimal, _ prec: Int) {
        // Integer part, padded with zeros as needed.
        if d.dp > 0 {
            let m = min(d.digits.count, d.dp)
            out.append(contentsOf: d.digits[0..<m])
            if m < d.dp { out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: d.dp - m)) }
        } else {
            out.append(UInt8(ascii: "0"))
        }
        if prec > 0 {
            out.append(UInt8(ascii: "."))
            for i in 1...prec {
                let j = d.dp + i - 1
                out.append(j >= 0 && j < d.digits.count ? d.digits[j] : UInt8(ascii: "0"))
            }
        }
    }

    /// Every digit of the magnitude's exact decimal value (a double is m × 2^e, a finite
    /// decimal), as strconv's decimal type computes it for fixed precisions.
    static func exactDigits(_ magnitude: Double) -> Decimal {
        if magnitude == 0 { return Decimal(digits: [], dp: 0) }
        var mantissa = magnitude.significandBitPattern
        var exponent = Int(magnitude.exponentBitPattern)
        if exponent == 0 {
            exponent = 1 - 1075  // Subnormal.
        } else {
            mantissa |= 1 << 52
            exponent -= 1075
        }
        // Digits of the mantissa, most significant first.
        var digits = Array(String(mantissa).utf8)
        var dp = digits.count
        // Multiply or divide by 2 as many times as the exponent says, a few bits at a time.
        var shift = exponent
        while shift > 0 {
            let k = min(shift, 28)
            leftShift(&digits, &dp, k)
            shift -= k
        }
        while shift < 0 {
            let k = min(-shift, 28)
            rightShift(&digits, &dp, k)
            shift += k
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return Decimal(digits: digits, dp: dp)
    }

    private static func leftShift(_ digits: inout [UInt8], _ dp: inout Int, _ k: Int) {
        var result: [UInt8] = []
        result.reserveCapacity(digits.count + 10)
        var carry: UInt64 = 0
        // Digits before the point and trailing fractional digits alike: the whole number is
        // digits × 10^(dp - count).
        for c in digits.reversed() {
            let n = (UInt64(c - UInt8(ascii: "0")) << UInt64(k)) + carry
            result.append(UInt8(n % 10) + UInt8(ascii: "0"))
            carry = n / 10
        }
        var added = 0
        while carry > 0 {
            result.append(UInt8(carry % 10) + UInt8(ascii: "0"))
            carry /= 10
            added += 1
        }
        digits = result.reversed()
        dp += added
        // Leading zeros cannot appear: the top digit was nonzero and only grew.
    }

    private static func rightShift(_ digits: inout [UInt8], _ dp: inout Int, _ k: Int) {
        let mask: UInt64 = (1 << UInt64(k)) - 1
        var result: [UInt8] = []
        result.reserveCapacity(digits.count + k)
        var n: UInt64 = 0
        var r = 0
        var started = false
        // Long division by 2^k, digit by digit, continuing while a remainder is left.
        while r < digits.count || n > 0 {
            if r < digits.count {
                n = n * 10 + UInt64(digits[r] - UInt8(ascii: "0"))
            } else {
                n = n * 10
            }
            r += 1
            let q = n >> UInt64(k)
            n &= mask
            if !started {
                if q == 0 {
                    dp -= 1
                    continue
                }
                started = true
            }
            result.append(UInt8(q) + UInt8(ascii: "0"))
        }
        digits = result
    }

    /// Rounds to `nd` digits, half to even on an exact tie (strconv's shouldRoundUp).
    static func round(_ d: inout Decimal, _ nd: Int) {
        if nd < 0 || nd >= d.digits.count { return }
        var up = false
        let digit = d.digits[nd]
        if digit > UInt8(ascii: "5") {
            up = true
        } else if digit == UInt8(ascii: "5") {
            if nd + 1 < d.digits.count {
                up = true  // More digits after the 5: above half.
            } else {
                // Exactly half: round to even.
                up = nd > 0 && (d.digits[nd - 1] - UInt8(ascii: "0")) % 2 == 1
            }
        }
        if up {
            var i = nd - 1
            while i >= 0 && d.digits[i] == UInt8(ascii: "9") { i -= 1 }
            if i < 0 {
                d.digits = [UInt8(ascii: "1")]
                d.dp += 1
                return
            }
            d.digits[i] += 1
            d.digits.removeSubrange((i + 1)...)
        } else {
            d.digits.removeSubrange(nd...)
            while d.digits.last == UInt8(ascii: "0") { d.digits.removeLast() }
        }
    }
}
